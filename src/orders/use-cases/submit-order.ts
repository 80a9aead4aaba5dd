import { recordEventAtCommit } from '../../events/event.service.js';
import { atCommit } from '../../storage/at-commit.js';
import { withEventOrigin } from '../../events/origin.js';
import type { IdempotentOutcome } from '../../idempotency/idempotency.service.js';
import type { ClientId } from '../../lib/ids.js';
import { toOrder } from '../order.mapping.js';
import { insertOrder } from '../order.repository.js';
import type { OrderRequest } from '../order.schemas.js';
import { answerAfterPartner, type IdempotencyContext, type OrderUseCaseDeps } from './deps.js';

/**
 * Submitting an order (POST /v1/orders), from the request to its answer:
 *
 * 1. The Idempotency-Key is held; in one transaction, its earlier answer is replayed, or the request
 *    is checked (422 on any failed check, nothing stored; a sell to a partner that asks for it also
 *    against the subject's holdings there), the order is stored `created` with
 *    `order.created`, and the answer (201, the order) is recorded with the key still in flight.
 * 2. After the commit, never inside it: the order as just written, with the instrument it was
 *    checked against, is handed to its partner (no second read of either).
 * 3. The partner's answer (accepted: `routed`; refused: `failed`) is applied with its events, and in
 *    that transaction becomes the key's final answer. When the partner is unreachable or silent, the
 *    order stays `created`, the router retries in the background, and the answer is the 201 of step 1.
 *
 * A replay with the key while this runs gets 409, then exactly the answer this request gave.
 */
export async function submitOrder(
  deps: OrderUseCaseDeps,
  idempotency: IdempotencyContext,
  clientId: ClientId,
  request: OrderRequest,
): Promise<IdempotentOutcome> {
  const call = deps.idempotency.begin(idempotency.request, idempotency.serialize);
  try {
    const written = await deps.transact((trx) =>
      withEventOrigin(trx, idempotency.request.origin, async () => {
        // The key's claim and the order's checks are sent together (PostgreSQL pipelines them); the
        // checks only read and lock, and a replay answers before any of their refusals. Both are
        // awaited before anything else, so no statement of either outlives the transaction.
        const [claimed, checked] = await Promise.allSettled([
          deps.idempotency.claim(trx, call),
          deps.orders.prepare(trx, clientId, request),
        ]);
        if (claimed.status === 'rejected') throw claimed.reason;
        if (claimed.value !== null) return { outcome: claimed.value };
        if (checked.status === 'rejected') throw checked.reason;
        const { row, instrument } = checked.value;
        await deps.holdings.newOrder(trx, row);
        const order = toOrder(row);
        // The order, its event and the key's response go out with the COMMIT: one round trip on PostgreSQL.
        atCommit(trx, () => insertOrder(trx, row));
        recordEventAtCommit(trx, {
          clientId,
          type: 'order.created',
          data: order,
          livemode: deps.livemode,
          at: new Date(row.created_at),
          subjectRef: order.id,
        });
        const outcome = await deps.idempotency.record(trx, call, { status: 201, body: order }, { final: false, atCommit: true });
        return { outcome, row, instrument };
      }),
    );
    if (written.row === undefined) return written.outcome;
    const { row, instrument } = written;
    return await answerAfterPartner(
      deps.idempotency,
      call,
      written.outcome,
      201,
      (after) => deps.router.handOver(row, after, instrument),
      idempotency.request.origin,
    );
  } finally {
    deps.idempotency.end(call);
  }
}

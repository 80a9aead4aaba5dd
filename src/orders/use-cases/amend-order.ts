import { withEventOrigin } from '../../events/origin.js';
import type { IdempotentOutcome } from '../../idempotency/idempotency.service.js';
import type { ClientId } from '../../lib/ids.js';
import { toOrder } from '../order.mapping.js';
import type { AmendRequest } from '../order.schemas.js';
import { answerAfterPartner, type IdempotencyContext, type OrderUseCaseDeps } from './deps.js';

/**
 * Amending an order (POST /v1/orders/{id}/amend), from the request to its answer:
 *
 * 1. The Idempotency-Key is held; in one transaction, its earlier answer is replayed, or the amend is
 *    checked (409 unless an open limit order with no request waiting; 422 for values a new order
 *    could not have, over the monthly cap, or a sell's raise beyond the holdings where the partner
 *    asks for that check) and recorded as `pending_amend` with the values asked
 *    for, and the answer (202, the order) is recorded in flight.
 * 2. After the commit: the order as just written is sent to its partner's amend.
 * 3. When the partner answered within the request (replaced, or refused), the order as it then is
 *    becomes the final answer with 200, in the transaction that applied the answer and its events
 *    (`order.amended`, `order.request_refused`); otherwise the 202 of step 1 is final.
 */
export async function amendOrder(
  deps: OrderUseCaseDeps,
  idempotency: IdempotencyContext,
  clientId: ClientId,
  orderId: string,
  change: AmendRequest,
): Promise<IdempotentOutcome> {
  const call = deps.idempotency.begin(idempotency.request, idempotency.serialize);
  try {
    const written = await deps.transact((trx) =>
      withEventOrigin(trx, idempotency.request.origin, async () => {
        const earlier = await deps.idempotency.claim(trx, call);
        if (earlier !== null) return { outcome: earlier };
        const row = await deps.orders.requestAmend(trx, clientId, orderId, change);
        await deps.holdings.amendedOrder(trx, row);
        const outcome = await deps.idempotency.record(trx, call, { status: 202, body: toOrder(row) }, { final: false });
        return { outcome, row };
      }),
    );
    if (written.row === undefined) return written.outcome;
    const { row } = written;
    return await answerAfterPartner(
      deps.idempotency,
      call,
      written.outcome,
      200,
      (after) => deps.router.amend(row, after),
      idempotency.request.origin,
    );
  } finally {
    deps.idempotency.end(call);
  }
}

import { withEventOrigin } from '../../events/origin.js';
import type { IdempotentOutcome } from '../../idempotency/idempotency.service.js';
import type { ClientId } from '../../lib/ids.js';
import { toOrder } from '../order.mapping.js';
import { answerAfterPartner, type IdempotencyContext, type OrderUseCaseDeps } from './deps.js';

/**
 * Cancelling an order (POST /v1/orders/{id}/cancel), from the request to its answer:
 *
 * 1. The Idempotency-Key is held; in one transaction, its earlier answer is replayed, or the cancel is
 *    recorded (404 for an order of another client, 409 for a final one; `pending_cancel` otherwise,
 *    unchanged when a cancel already waits) and the answer (202, the order) is recorded in flight.
 * 2. After the commit: the order as just written is sent to its partner's cancel.
 * 3. When the partner answered within the request (cancelled, or refused), the order as it then is
 *    becomes the final answer with 200, in the transaction that applied the answer and its events
 *    (`order.cancelled`, `order.request_refused`); otherwise the 202 of step 1 is final and the
 *    answer comes later through the router.
 */
export async function cancelOrder(
  deps: OrderUseCaseDeps,
  idempotency: IdempotencyContext,
  clientId: ClientId,
  orderId: string,
): Promise<IdempotentOutcome> {
  const call = deps.idempotency.begin(idempotency.request, idempotency.serialize);
  try {
    const written = await deps.transact((trx) =>
      withEventOrigin(trx, idempotency.request.origin, async () => {
        const earlier = await deps.idempotency.claim(trx, call);
        if (earlier !== null) return { outcome: earlier };
        const row = await deps.orders.requestCancel(trx, clientId, orderId);
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
      (after) => deps.router.cancel(row, after),
      idempotency.request.origin,
    );
  } finally {
    deps.idempotency.end(call);
  }
}

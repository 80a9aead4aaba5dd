import type {
  IdempotencyService,
  IdempotentCall,
  IdempotentOutcome,
  IdempotentRequest,
  SentResponse,
  WorkResult,
} from '../../idempotency/idempotency.service.js';
import type { EventOrigin } from '../../events/origin.js';
import type { Transact } from '../../storage/database.js';
import type { OrderService } from '../order.service.js';
import type { AfterApply, OrderRouter, SellCheck } from '../ports.js';

/** What the order use cases work with, passed in by the composition root. */
export interface OrderUseCaseDeps {
  /** Opens every transaction of the use cases (Storage.transact). */
  transact: Transact;
  idempotency: IdempotencyService;
  orders: OrderService;
  router: OrderRouter;
  /** The holdings check of sells, for partners that ask for it. */
  holdings: SellCheck;
  livemode: boolean;
}

/**
 * The request's Idempotency-Key, what identifies the request under it, and the serialiser of the
 * route's response schema (the bytes sent are the bytes stored for a replay).
 */
export interface IdempotencyContext {
  request: IdempotentRequest;
  serialize: (result: WorkResult) => string;
}

/**
 * The last step of a use case that asks the partner after its commit. `ask` runs the router, which
 * calls the `after` it is given inside the transaction applying the partner's answer: the order as it
 * then is, with `status`, becomes the key's final response in that same transaction. When the partner
 * did not answer within the request, the response committed with the request is final; when asking
 * failed, too, and the error is returned for the log (the request's work did commit).
 */
export async function answerAfterPartner(
  idempotency: IdempotencyService,
  call: IdempotentCall,
  committed: IdempotentOutcome,
  status: number,
  ask: (after: AfterApply) => Promise<unknown>,
  origin?: EventOrigin,
): Promise<IdempotentOutcome> {
  const asCommitted: SentResponse = { status: committed.status, body: committed.body };
  let answered: Promise<SentResponse> | undefined;
  try {
    const after: AfterApply = async (trx, order) => {
      // Completed with the COMMIT of the transaction applying the answer; settled once it committed.
      answered = idempotency.finishAtCommit(trx, call, { status, body: order });
    };
    // The partner's answer applied within the request is the request's doing: its events keep its ids.
    after.origin = origin;
    await ask(after);
  } catch (error) {
    // The transaction that stored the answer may not have committed: the stored record decides.
    return { ...committed, ...(await idempotency.finishAsCommitted(call, asCommitted)), followUpError: error };
  }
  return { ...committed, ...(answered === undefined ? await idempotency.finishAsCommitted(call, asCommitted) : await answered) };
}

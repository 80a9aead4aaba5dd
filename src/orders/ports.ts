import type { Kysely } from 'kysely';
import type { EventOrigin } from '../events/origin.js';
import type { InstrumentRow } from '../partners/instrument.table.js';
import type { Database } from '../storage/schema.js';
import type { Order } from './order.schemas.js';
import type { OrderRow } from './order.table.js';

/**
 * What the orders ask of the layers above them, stated here and passed in by the composition root
 * (src/services.ts): the router (routing/router.ts) and its connector registry, and the holdings
 * check of positions/holdings-check.ts. Orders import none of them, so that routing, post-trade and
 * positions, which read orders, stay above.
 */

/**
 * Runs in the transaction that applies a change to an order, with the order as it now is. `origin`:
 * the API request waiting for that change, whose ids the change's events keep. The router's
 * `AfterApply`.
 */
export type AfterApply = ((trx: Kysely<Database>, order: Order) => Promise<void>) & { origin?: EventOrigin };

/** Hands orders and their requests to their partners, applying each answer with `after`: the Router. */
export interface OrderRouter {
  handOver(row: OrderRow, after?: AfterApply, instrument?: InstrumentRow): Promise<unknown>;
  cancel(row: OrderRow, after?: AfterApply): Promise<unknown>;
  amend(row: OrderRow, after?: AfterApply): Promise<unknown>;
}

/** The connectors this process can route to, by name: the ConnectorRegistry. */
export interface ConnectorNames {
  has(connector: string): boolean;
}

/** Refuses a sell beyond the subject's position, for partners that ask for it: the HoldingsCheck. */
export interface SellCheck {
  /** A new order, checked and not yet stored. */
  newOrder(trx: Kysely<Database>, row: OrderRow): Promise<void>;
  /** An amend just recorded on `row`. */
  amendedOrder(trx: Kysely<Database>, row: OrderRow): Promise<void>;
}

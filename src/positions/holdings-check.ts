import type { Kysely } from 'kysely';
import { validationError } from '../lib/errors.js';
import type { OrderRow } from '../orders/order.table.js';
import type { ReferenceData } from '../partners/reference-data.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { holdingsShortfall } from './core/holdings.js';
import { findBookForUpdate, findPosition, openSellOrders, type PositionKey } from './position.repository.js';

/**
 * The holdings check of partners whose import file sets `checks.holdings: true`: a sell beyond the
 * subject's position available at the partner is 422 (`qty`, rule `holdings`). Available is the
 * position's quantity (held, plus bought, less sold) less what the subject's other open sells of the
 * instrument there may still sell: each open sell's quantity not yet filled, at the larger of its
 * quantity and a pending amend's. An order leaves that sum when it ends (filled, failed, cancelled).
 *
 * It runs in the order's transaction, after the order's other checks and before it is written, and
 * locks the subject's book at the partner first (a row lock on PostgreSQL; SQLite has one writer), so
 * that of two sells placed at once the second sees the first: both cannot pass.
 */
export class HoldingsCheck {
  constructor(
    private readonly reference: ReferenceData,
    private readonly dialect: DialectName,
  ) {}

  /** A new order, checked and not yet stored. */
  async newOrder(trx: Kysely<Database>, row: OrderRow): Promise<void> {
    if (row.side !== 'sell' || !(await this.#required(row.rcpt_to))) return;
    await this.#check(trx, row, row.qty, row.qty, null);
  }

  /**
   * An amend just recorded on `row` (its pending `amend_qty`): checked when it raises a sell's
   * quantity, as the rest of the order (the new quantity less what filled) against what the other
   * sells leave.
   */
  async amendedOrder(trx: Kysely<Database>, row: OrderRow): Promise<void> {
    if (row.side !== 'sell' || row.amend_qty === null || row.amend_qty <= row.qty || !(await this.#required(row.rcpt_to))) return;
    await this.#check(trx, row, row.amend_qty, row.amend_qty - row.filled_qty, row.id);
  }

  async #required(partnerId: string): Promise<boolean> {
    return (await this.reference.current()).partner(partnerId)?.checks.holdings === true;
  }

  async #check(trx: Kysely<Database>, row: OrderRow, qty: number, needed: number, except: string | null): Promise<void> {
    const key: PositionKey = { client_id: row.client_id, subject_id: row.subject_id, rcpt_to: row.rcpt_to, instrument: row.instrument };
    // No book: the subject holds nothing at the partner, and no sell passes.
    const book = await findBookForUpdate(trx, this.dialect, key);
    const position = book === undefined ? undefined : await findPosition(trx, key);
    let pending = 0n;
    for (const o of await openSellOrders(trx, key)) {
      if (o.id !== except) pending += BigInt(Math.max(o.qty, o.amend_qty ?? 0) - o.filled_qty);
    }
    const shortfall = holdingsShortfall({
      qty,
      needed,
      held: BigInt(position?.qty ?? 0),
      pendingSells: pending,
      instrument: row.instrument,
    });
    if (shortfall !== null) throw validationError([shortfall]);
  }
}

import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import type { Transact } from '../../storage/database.js';
import type { DialectName } from '../../storage/dialect.js';
import type { Database } from '../../storage/schema.js';
import { claimExpiredOrders, findOrder } from '../order.repository.js';
import type { OrderRouter } from '../ports.js';

export interface OrderExpiryOptions {
  dialect: DialectName;
  /** How long a claimed expiry is this process's before another may take it over. */
  leaseMs: number;
}

/**
 * Expiring orders: a `day` order still open at its exchange's close, a `gtd` order at the close of
 * its expire date (each order's `expiry_due_at`, set from the calendar when it was placed or amended).
 *
 * 1. Claim the due orders in one transaction: each becomes a pending cancel with reason `expired`,
 *    under a lease (SKIP LOCKED on PostgreSQL, a conditional update on SQLite), so that processes
 *    running together, or one restarted, handle each order once.
 * 2. Ask each order's partner to cancel what remains. The router applies the partner's answer (or its
 *    own report of the expiry) in the transaction that cancels the order and emits `order.cancelled`,
 *    once; an order the partner never took is cancelled here.
 */
export class OrderExpiry {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly router: Pick<OrderRouter, 'cancel'>,
    private readonly clock: Clock,
    private readonly options: OrderExpiryOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Expires up to `limit` orders due now (or, with `testClock`, that clock's orders due at its time;
   * orders on a clock are otherwise left to it). Returns how many were claimed.
   */
  async expireDue(limit = 100, testClock?: { id: string; at: number }): Promise<number> {
    const now = this.clock.now().getTime();
    const ids = await this.transact((trx) => claimExpiredOrders(trx, this.options.dialect, now, this.options.leaseMs, limit, testClock));
    if (ids.length > 0)
      this.log.info(
        { count: ids.length, ...(testClock === undefined ? {} : { test_clock: testClock.id }) },
        'orders expired; cancelling at their partners',
      );
    for (const id of ids) {
      try {
        // The claim changed the order in the database: read it as it now is.
        const row = await findOrder(this.db, id);
        if (row !== undefined) await this.router.cancel(row);
      } catch (error) {
        this.log.error({ order_id: id, err: error }, 'expiry failed; the router will retry');
      }
    }
    return ids.length;
  }
}

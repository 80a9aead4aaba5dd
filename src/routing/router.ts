import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import { recordEvent } from '../events/event.service.js';
import { findInstrument } from '../partners/instrument.repository.js';
import { applyFill, FillError } from '../orders/core/fills.js';
import { canTransition, isFinal, type OrderStatus } from '../orders/core/state-machine.js';
import { claimDueOrders, findOrder, findOrderForUpdate, insertFill, partnersWithOpenOrders, updateOrder } from '../orders/order.repository.js';
import type { Order } from '../orders/order.schemas.js';
import { toOrder } from '../orders/order.service.js';
import type { OrderRow } from '../orders/order.table.js';
import type { ClientId, OrderId } from '../lib/ids.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Transact } from '../storage/database.js';
import { routeBackoffMs } from './backoff.js';
import { classifyReport, ConnectorUnavailableError, type ExecutionReport, type OrderForPartner, type PartnerConnector } from './connector.js';
import { leaseConnector, savePosition } from './position.repository.js';
import type { ConnectorRegistry } from './registry.js';

/** Runs in the transaction that applies a change to an order, with the order as it now is. */
export type AfterApply = (trx: Kysely<Database>, order: Order) => Promise<void>;

export interface RouterOptions {
  livemode: boolean;
  dialect: DialectName;
  /** How long a request waits for the partner to take the order before answering `created`. */
  handOverTimeoutMs: number;
  leaseMs: number;
  /** This process, as the holder of leases. */
  owner: string;
  random: () => number;
}

type Outcome = 'applied' | 'duplicate' | 'gap' | 'unknown_order';

class HandOverTimeout extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new HandOverTimeout(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Moves orders between the service and the partners' connectors: hands `created` orders over
 * (retrying with backoff while a partner is unavailable), asks partners to cancel, and applies their
 * execution reports in order and exactly once. Every change to an order and the event that reports
 * it commit in one transaction; a report is applied only if its `seq` is the next one for its order,
 * so duplicates and late copies change nothing.
 */
export class Router {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly connectors: ConnectorRegistry,
    private readonly clock: Clock,
    private readonly options: RouterOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  #connectorOf(row: Pick<OrderRow, 'connector' | 'rcpt_to'>): PartnerConnector | undefined {
    return this.connectors.get(row.connector, row.rcpt_to);
  }

  async #forPartner(row: OrderRow): Promise<OrderForPartner> {
    const instrument = await findInstrument(this.db, row.instrument);
    return {
      order_id: row.id as OrderId,
      instrument: row.instrument,
      instrument_status: instrument?.status ?? 'active',
      side: row.side,
      qty: row.qty,
      limit_price_cents: row.limit_price_cents,
      reference_price_cents: row.reference_price_cents,
    };
  }

  /**
   * Hands a `created` order to its partner. On success the partner's answer (accepted or rejected) is
   * applied at once; when the partner is unavailable (or silent past the time-out) the order stays
   * `created` and the router tries again after a backoff. Submitting twice is safe: connectors answer
   * a repeated submit with the first outcome.
   */
  async handOver(orderId: string, after?: AfterApply): Promise<Outcome | 'retry' | 'skipped'> {
    const row = await findOrder(this.db, orderId);
    if (row === undefined || row.status !== 'created') return 'skipped';
    if (row.cancel_requested_at !== null) return this.#cancelLocally(row.id, after).then(() => 'applied' as const);
    const connector = this.#connectorOf(row);
    if (connector === undefined) {
      this.log.error({ order_id: row.id, connector: row.connector }, 'no connector for the partner of an order');
      await this.#retryLater(row);
      return 'retry';
    }
    try {
      const result = await withTimeout(connector.submit(await this.#forPartner(row)), this.options.handOverTimeoutMs);
      return await this.apply(result.report, after);
    } catch (error) {
      if (!(error instanceof ConnectorUnavailableError) && !(error instanceof HandOverTimeout)) throw error;
      this.log.warn({ order_id: row.id, connector: connector.name, attempt: row.route_attempts + 1, err: error }, 'partner unavailable; hand-over will be retried');
      await this.#retryLater(row);
      return 'retry';
    }
  }

  async #retryLater(row: OrderRow): Promise<void> {
    const attempts = row.route_attempts + 1;
    const now = this.clock.now().getTime();
    await this.transact((trx) => updateOrder(trx, row.id, { route_attempts: attempts, next_route_at: now + routeBackoffMs(attempts, this.options.random), route_lease_until: null }));
  }

  /** A cancel request for an order the partner never took: the order is cancelled here. */
  async #cancelLocally(orderId: string, after?: AfterApply): Promise<void> {
    await this.transact(async (trx) => {
      const row = await findOrderForUpdate(trx, this.options.dialect, orderId);
      if (row === undefined || row.status !== 'created') return;
      const now = this.clock.now().getTime();
      await updateOrder(trx, row.id, { status: 'cancelled', next_route_at: null, route_lease_until: null, updated_at: now });
      await after?.(trx, toOrder({ ...row, status: 'cancelled', updated_at: now }));
    });
  }

  /**
   * Asks the partner to cancel an open order. A `cancelled` answer is applied at once; a refusal
   * because the order already finished leaves the final reports to the log; an unavailable partner
   * is asked again after a backoff.
   */
  async cancel(orderId: string, after?: AfterApply): Promise<void> {
    const row = await findOrder(this.db, orderId);
    if (row === undefined) return;
    if (isFinal(row.status)) {
      await this.transact((trx) => updateOrder(trx, row.id, { next_route_at: null, route_lease_until: null }));
      return;
    }
    const connector = this.#connectorOf(row);
    if (connector === undefined) return this.#retryLater(row);
    try {
      const result = await withTimeout(connector.cancel(row.id as OrderId), this.options.handOverTimeoutMs);
      if (result.status === 'cancelled') {
        await this.apply(result.report, after);
      } else if (result.reason === 'unknown_order') {
        await this.#cancelLocally(row.id, after);
      } else {
        // Already filled or rejected at the partner (its final reports are in the log), or refused by
        // the partner: the order stays as its reports say, and the cancel is not asked again.
        await this.pollConnector(`${row.connector}:${row.rcpt_to}`, connector);
        await this.transact((trx) => updateOrder(trx, row.id, { next_route_at: null, route_lease_until: null }));
      }
    } catch (error) {
      if (!(error instanceof ConnectorUnavailableError) && !(error instanceof HandOverTimeout)) throw error;
      await this.#retryLater(row);
    }
  }

  /** Applies one execution report if it is the next for its order; see the class comment. */
  async apply(report: ExecutionReport, after?: AfterApply): Promise<Outcome> {
    return this.transact(async (trx) => {
      const row = await findOrderForUpdate(trx, this.options.dialect, report.order_id);
      if (row === undefined) return 'unknown_order';
      const place = classifyReport(row.last_report_seq, report);
      if (place !== 'next') return place;
      const now = this.clock.now().getTime();
      const changes: Partial<OrderRow> = { last_report_seq: report.seq, updated_at: now };
      if (!canTransition(row.status, this.#targetStatus(report))) {
        // A report that does not fit the order's state (a partner bug, or a race with a local
        // cancel): recorded as seen so it is not re-read forever, and logged for an operator.
        this.log.error({ order_id: row.id, status: row.status, report }, 'execution report does not fit the order state; ignored');
        await updateOrder(trx, row.id, changes);
        return 'applied';
      }
      let executed: { fill_qty: number; fill_price_cents: number; exchange_ref: string; executed_at: string } | null = null;
      switch (report.type) {
        case 'accepted':
          changes.status = 'routed';
          changes.next_route_at = row.cancel_requested_at === null ? null : now;
          changes.route_lease_until = null;
          break;
        case 'rejected':
          changes.status = 'failed';
          changes.failure_reason = report.reason;
          changes.next_route_at = null;
          break;
        case 'cancelled':
          changes.status = 'cancelled';
          changes.next_route_at = null;
          break;
        case 'partial_fill':
        case 'fill': {
          let state;
          try {
            state = applyFill(
              { qty: row.qty, filled_qty: row.filled_qty, fill_notional_cents: BigInt(row.fill_notional_cents), status: row.status },
              { fill_qty: report.fill_qty, fill_price_cents: report.fill_price_cents },
            );
          } catch (error) {
            if (!(error instanceof FillError)) throw error;
            this.log.error({ order_id: row.id, report, err: error }, 'fill refused; ignored');
            await updateOrder(trx, row.id, changes);
            return 'applied';
          }
          changes.status = state.status;
          changes.filled_qty = state.filled_qty;
          changes.fill_notional_cents = state.fill_notional_cents.toString();
          if (state.status === 'filled') changes.next_route_at = null;
          await insertFill(trx, {
            order_id: row.id,
            seq: report.seq,
            report_id: report.report_id,
            fill_qty: report.fill_qty,
            fill_price_cents: report.fill_price_cents,
            exchange_ref: report.exchange_ref,
            executed_at: Date.parse(report.executed_at),
          });
          executed = report;
          break;
        }
      }
      await updateOrder(trx, row.id, changes);
      const order = toOrder({ ...row, ...changes });
      const clientId = row.client_id as ClientId;
      const at = new Date(now);
      const emit = (type: 'order.routed' | 'order.failed' | 'order.executed', data: unknown) =>
        recordEvent(trx, { clientId, type, data, livemode: this.options.livemode, at, subjectRef: row.id });
      if (report.type === 'accepted') await emit('order.routed', order);
      if (report.type === 'rejected') await emit('order.failed', order);
      if (executed !== null) {
        await emit('order.executed', {
          order_id: order.id,
          rcpt_to: order.rcpt_to,
          instrument: order.instrument,
          side: order.side,
          filled_qty: order.filled_qty,
          average_fill_price_cents: order.average_fill_price_cents,
          executed_at: isoMillis(Date.parse(executed.executed_at)),
          exchange_ref: executed.exchange_ref,
          fill_qty: executed.fill_qty,
          fill_price_cents: executed.fill_price_cents,
          status: order.status,
        });
      }
      await after?.(trx, order);
      return 'applied';
    });
  }

  #targetStatus(report: ExecutionReport): OrderStatus {
    switch (report.type) {
      case 'accepted':
        return 'routed';
      case 'rejected':
        return 'failed';
      case 'cancelled':
        return 'cancelled';
      case 'fill':
        return 'filled';
      case 'partial_fill':
        return 'partially_filled';
    }
  }

  /** Hand-overs and cancels that are due (claimed with a lease, so one process acts on each). */
  async routeDue(limit = 100): Promise<number> {
    const now = this.clock.now().getTime();
    const rows = await this.transact((trx) => claimDueOrders(trx, this.options.dialect, now, this.options.leaseMs, limit));
    for (const row of rows) {
      try {
        if (row.status === 'created' && row.cancel_requested_at === null) await this.handOver(row.id);
        else if (row.cancel_requested_at !== null && !isFinal(row.status)) await this.cancel(row.id);
        else await this.transact((trx) => updateOrder(trx, row.id, { next_route_at: null, route_lease_until: null }));
      } catch (error) {
        this.log.error({ order_id: row.id, err: error }, 'routing failed');
      }
    }
    return rows.length;
  }

  /** Reads and applies the report logs of every partner with open orders; returns how many applied. */
  async pollReports(): Promise<number> {
    let applied = 0;
    for (const { rcpt_to, connector: name } of await partnersWithOpenOrders(this.db)) {
      const connector = this.connectors.get(name, rcpt_to);
      if (connector !== undefined) applied += await this.pollConnector(`${name}:${rcpt_to}`, connector);
    }
    return applied;
  }

  async pollConnector(key: string, connector: PartnerConnector): Promise<number> {
    const now = this.clock.now().getTime();
    const lease = await this.transact((trx) => leaseConnector(trx, key, this.options.owner, now, this.options.leaseMs));
    if (lease === null) return 0;
    let batch;
    try {
      batch = await connector.reports(lease.position, { limit: 500 });
    } catch (error) {
      if (error instanceof ConnectorUnavailableError) return 0;
      throw error;
    }
    let applied = 0;
    for (const report of batch.reports) {
      const outcome = await this.apply(report);
      if (outcome === 'gap') {
        // An earlier report of that order is missing: keep the position and read again next time.
        this.log.warn({ order_id: report.order_id, seq: report.seq, connector: key }, 'gap in execution reports; waiting');
        return applied;
      }
      if (outcome === 'applied') applied++;
    }
    await this.transact((trx) => savePosition(trx, key, this.options.owner, batch.position));
    return applied;
  }
}

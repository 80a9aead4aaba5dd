import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import type { OrderId } from '../lib/ids.js';
import { priceLimits } from '../orders/core/price-rules.js';
import { findInstrument } from '../partners/instrument.repository.js';
import type { RequestRefusal } from '../orders/core/lifecycle.js';
import { isFinal } from '../orders/core/state-machine.js';
import { claimDueOrders, findOrderForUpdate, partnersWithOpenOrders, updateOrder } from '../orders/order.repository.js';
import { toOrder } from '../orders/order.mapping.js';
import type { OrderRow } from '../orders/order.table.js';
import type { InstrumentRow } from '../partners/instrument.table.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Transact } from '../storage/database.js';
import { routeBackoffMs } from './backoff.js';
import type { ApplyToOrders, ExecutionReport, OrderForPartner, PartnerConnector } from './connector.js';
import type { ConnectorRegistry } from './registry.js';
import { NO_PENDING_REQUEST, refusalChanges } from './report-effect.js';
import { ReportLogReader } from './report-log-reader.js';
import { AnswerNotConfirmed, HandOverAnswers, isUnreachable, withTimeout } from './hand-over-answers.js';
import { ReportApplier, type FillEffects, type Outcome } from './report-applier.js';
import type { AfterApply } from '../orders/ports.js';

export type { AfterApply } from '../orders/ports.js';
export type { FillEffects, Outcome } from './report-applier.js';

export interface RouterOptions {
  livemode: boolean;
  dialect: DialectName;
  /** How long a request waits for the partner (to take an order, or to answer a cancel or amend). */
  handOverTimeoutMs: number;
  leaseMs: number;
  /** This process, as the holder of leases. */
  owner: string;
  random: () => number;
  /**
   * Sandbox: the time of a test clock, on which the orders placed on it live (their partner's
   * reports are dated on it); undefined when there is no such clock.
   */
  testClockTime?: (db: Kysely<Database>, testClockId: string) => Promise<number | undefined>;
}

/**
 * Where a cancel or amend stands after the router asked the partner: `answered` (confirmed or
 * refused; the order shows which), `pending` (the partner took it and will answer later, or its
 * answer is not applied yet), `retry` (the partner was not reached: asked again after a backoff),
 * `skipped` (no such request is waiting).
 */
export type RequestProgress = 'answered' | 'pending' | 'retry' | 'skipped';

/**
 * Moves orders between the service and the partners' connectors: hands `created` orders over
 * (retrying with backoff while a partner is unavailable), sends cancels (the client's, and the
 * expiries of day and gtd orders) and amends, and applies the partners' execution reports in order
 * and exactly once. Every change to an order, the events that report it and, for a fill, the
 * investor's position (`fillEffects`) commit in one transaction; a report is applied only if its
 * `seq` is the next one for its order, so duplicates and late copies change nothing.
 */
export class Router {
  readonly #reports: ReportApplier;
  /** The report logs this process holds the lease of: where it stopped, and until when the lease runs. */
  readonly #logs: ReportLogReader;
  readonly #answers: HandOverAnswers;
  /** Applies a connector's reports to their orders as it records them (connector.ts, ApplyToOrders). */
  readonly applyToOrders: ApplyToOrders;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly connectors: ConnectorRegistry,
    private readonly clock: Clock,
    private readonly options: RouterOptions,
    private readonly log: FastifyBaseLogger,
    fillEffects?: FillEffects,
  ) {
    this.#reports = new ReportApplier(options, clock, log, fillEffects);
    this.#answers = new HandOverAnswers(this.#reports, log);
    this.#logs = new ReportLogReader(db, transact, this.#reports, clock, options, log);
    this.applyToOrders = this.#answers.applyToOrders;
  }

  #connectorOf(row: Pick<OrderRow, 'connector' | 'rcpt_to'>): PartnerConnector | undefined {
    return this.connectors.get(row.connector, row.rcpt_to);
  }

  /**
   * The order as its partner gets it. `checked` is the instrument the order was just checked against
   * (a request hands over what it wrote, without reading it again); a retry in the background reads
   * the catalogue as it is now.
   */
  async #forPartner(row: OrderRow, checked?: InstrumentRow): Promise<OrderForPartner> {
    const instrument = checked ?? (await findInstrument(this.db, row.instrument));
    return {
      order_id: row.id as OrderId,
      instrument: row.instrument,
      isin: instrument?.isin ?? null,
      instrument_status: instrument?.status ?? 'active',
      side: row.side,
      qty: row.qty,
      limit_price_cents: row.limit_price_cents,
      reference_price_cents: row.reference_price_cents,
      time_in_force: row.time_in_force,
      expire_date: row.expire_date,
      tick_size_cents: instrument?.tick_size_cents ?? 1,
      price_limits: instrument === undefined ? null : priceLimits({ ...instrument, reference_price_cents: row.reference_price_cents }),
      account: row.account,
    };
  }

  /**
   * Hands a `created` order to its partner. On success the partner's answer (accepted or rejected) is
   * applied at once; when the partner is unavailable (or silent past the time-out) the order stays
   * `created` and the router tries again after a backoff. Submitting twice is safe: connectors answer
   * a repeated submit with the first outcome. An order with a cancel waiting is left to `cancel`.
   * `row` is the order as its caller just wrote or claimed it (not read again here).
   */
  async handOver(row: OrderRow, after?: AfterApply, instrument?: InstrumentRow): Promise<Outcome | 'retry' | 'skipped'> {
    if (row.status !== 'created' || row.pending_request !== null) return 'skipped';
    const connector = this.#connectorOf(row);
    if (connector === undefined) {
      this.log.error({ order_id: row.id, connector: row.connector }, 'no connector for the partner of an order');
      await this.#retryLater(row);
      return 'retry';
    }
    // A connector that applies its reports as it records them (applyToOrders) runs `after` there.
    const answering = after === undefined ? undefined : this.#answers.waitFor(row.id, after);
    try {
      const result = await withTimeout(connector.submit(await this.#forPartner(row, instrument)), this.options.handOverTimeoutMs);
      if (answering?.committed === true) return 'applied';
      return await this.apply(result.report, after);
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      this.log.warn(
        { order_id: row.id, connector: connector.name, attempt: row.route_attempts + 1, err: error },
        'partner unavailable; hand-over will be retried',
      );
      await this.#retryLater(row);
      // `after` ran in a transaction whose commit this request did not see: what is stored decides.
      if (answering?.ran === true && !answering.committed) throw new AnswerNotConfirmed(row.id, error);
      return 'retry';
    } finally {
      if (answering !== undefined) this.#answers.done(row.id, answering);
    }
  }

  async #retryLater(row: OrderRow): Promise<void> {
    const attempts = row.route_attempts + 1;
    const now = this.clock.now().getTime();
    await this.transact((trx) =>
      updateOrder(trx, row.id, {
        route_attempts: attempts,
        next_route_at: now + routeBackoffMs(attempts, this.options.random),
        route_lease_until: null,
      }),
    );
  }

  /**
   * Sends the order's pending cancel to its partner and applies the answer: `cancelled` at once, a
   * refusal (the order already ended, whose final reports are then read from the log), or `pending`
   * (the answer comes in the log). An order the connector never handed to the partner (its answer
   * `unknown_order`: still `created` because the partner was unavailable) is cancelled here; any
   * other refusal leaves the order as the partner's reports make it. An unreachable partner is
   * asked again after a backoff, with the same request id. `after` runs with the order once the
   * request is answered (see #settle). `row` is the order as its caller just wrote or claimed it.
   */
  async cancel(row: OrderRow, after?: AfterApply): Promise<RequestProgress> {
    if (row.pending_request !== 'pending_cancel' || row.pending_request_id === null || isFinal(row.status)) return this.#nothingToSend(row);
    const requestId = row.pending_request_id;
    const connector = this.#connectorOf(row);
    if (connector === undefined) {
      await this.#retryLater(row);
      return 'retry';
    }
    try {
      const result = await withTimeout(
        connector.cancel(row.id as OrderId, { request_id: requestId, reason: row.cancel_request_reason ?? 'requested' }),
        this.options.handOverTimeoutMs,
      );
      if (result.status === 'cancelled') await this.#applyAnswer(connector, row, result.report);
      else if (result.status === 'pending') await this.#markSent(row.id, requestId);
      else if (result.reason === 'unknown_order' && row.status === 'created') await this.#cancelLocally(row.id, requestId);
      else await this.#refused(connector, row, 'cancel', result.reason);
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      this.log.warn({ order_id: row.id, connector: connector.name, err: error }, 'partner unavailable; cancel will be retried');
      await this.#retryLater(row);
      return 'retry';
    }
    return this.#settle(row.id, after);
  }

  /** Sends the order's pending amend to its partner and applies the answer, as `cancel` does. */
  async amend(row: OrderRow, after?: AfterApply): Promise<RequestProgress> {
    if (row.pending_request !== 'pending_amend' || row.pending_request_id === null || isFinal(row.status)) return this.#nothingToSend(row);
    const requestId = row.pending_request_id;
    const connector = this.#connectorOf(row);
    if (connector === undefined) {
      await this.#retryLater(row);
      return 'retry';
    }
    const changes = {
      ...(row.amend_qty !== null && row.amend_qty !== row.qty ? { qty: row.amend_qty } : {}),
      ...(row.amend_limit_price_cents !== null && row.amend_limit_price_cents !== row.limit_price_cents
        ? { limit_price_cents: row.amend_limit_price_cents }
        : {}),
    };
    try {
      const result = await withTimeout(
        connector.amend(row.id as OrderId, { request_id: requestId, ...changes }),
        this.options.handOverTimeoutMs,
      );
      if (result.status === 'replaced') await this.#applyAnswer(connector, row, result.report);
      else if (result.status === 'pending') await this.#markSent(row.id, requestId);
      else await this.#refused(connector, row, 'amend', result.reason);
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      this.log.warn({ order_id: row.id, connector: connector.name, err: error }, 'partner unavailable; amend will be retried');
      await this.#retryLater(row);
      return 'retry';
    }
    return this.#settle(row.id, after);
  }

  /** Applies the report that answers a request; when earlier reports of the order are still unread, reads the log first. */
  async #applyAnswer(connector: PartnerConnector, row: OrderRow, report: ExecutionReport): Promise<void> {
    if ((await this.apply(report)) === 'gap') await this.pollConnector(`${row.connector}:${row.rcpt_to}`, connector);
  }

  async #nothingToSend(row: OrderRow): Promise<'skipped'> {
    if (row.next_route_at !== null)
      await this.transact((trx) => updateOrder(trx, row.id, { next_route_at: null, route_lease_until: null }));
    return 'skipped';
  }

  /**
   * Where the order's request stands now: still waiting (`pending`), or answered, in
   * which case `after` runs with the order as it now is, in a transaction of its own. A request that
   * a later one replaced (an amend, by a cancel) is not known to be answered: the partner may still
   * apply it, so it stays `pending` and its request keeps the answer it committed (202).
   */
  async #settle(orderId: string, after?: AfterApply): Promise<RequestProgress> {
    return this.transact(async (trx) => {
      const row = await findOrderForUpdate(trx, this.options.dialect, orderId);
      if (row === undefined) return 'skipped';
      if (row.pending_request !== null) return 'pending';
      await after?.(trx, toOrder(row));
      return 'answered';
    });
  }

  /** The partner took the request and answers in its log: the router stops sending it. */
  async #markSent(orderId: string, requestId: string): Promise<void> {
    await this.transact((trx) =>
      trx
        .updateTable('orders')
        .set({ next_route_at: null, route_lease_until: null })
        .where('id', '=', orderId)
        .where('pending_request_id', '=', requestId)
        .execute(),
    );
  }

  /**
   * A refusal. When it comes from executions the router may not have read yet (the order ended, or
   * filled beyond an amend's quantity), the log is read first, so that the order shows them (an end
   * refuses the request by itself); otherwise, or when the log could not be read now, the refusal is
   * recorded on the order, which stays as it is: one still `created` (its hand-over not yet
   * answered) goes on being handed over.
   */
  async #refused(connector: PartnerConnector, row: OrderRow, request: 'cancel' | 'amend', reason: RequestRefusal): Promise<void> {
    if (reason !== 'partner_refused' && reason !== 'unknown_order') await this.pollConnector(`${row.connector}:${row.rcpt_to}`, connector);
    await this.transact(async (trx) => {
      const current = await findOrderForUpdate(trx, this.options.dialect, row.id);
      if (current === undefined || current.pending_request_id !== row.pending_request_id || current.pending_request === null) return;
      const now = this.clock.now().getTime();
      const changes: Partial<OrderRow> = {
        ...refusalChanges(request, reason, isoMillis(await this.#marketTime(trx, current, now))),
        next_route_at: current.status === 'created' ? now : null,
        route_lease_until: null,
        updated_at: now,
      };
      await updateOrder(trx, row.id, changes);
      await this.#reports.emit(trx, current, { ...current, ...changes }, ['order.request_refused'], now);
    });
  }

  /** The time the order's partner lives on: its test clock's, else `now`. */
  async #marketTime(db: Kysely<Database>, row: OrderRow, now: number): Promise<number> {
    const clockId = row.test_clock_id;
    if (clockId === null || clockId === undefined || this.options.testClockTime === undefined) return now;
    return (await this.options.testClockTime(db, clockId)) ?? now;
  }

  /**
   * A cancel of an order its connector never handed to the partner (the connector answered
   * `unknown_order`, so no partner can report on it): the order is cancelled here.
   */
  async #cancelLocally(orderId: string, requestId: string): Promise<void> {
    await this.transact(async (trx) => {
      const row = await findOrderForUpdate(trx, this.options.dialect, orderId);
      if (row === undefined || row.status !== 'created' || row.pending_request_id !== requestId) return;
      const now = this.clock.now().getTime();
      const changes: Partial<OrderRow> = {
        ...NO_PENDING_REQUEST,
        status: 'cancelled',
        cancel_reason: row.cancel_request_reason ?? 'requested',
        next_route_at: null,
        route_lease_until: null,
        expiry_due_at: null,
        updated_at: now,
      };
      await updateOrder(trx, row.id, changes);
      await this.#reports.emit(trx, row, { ...row, ...changes }, ['order.cancelled'], now);
    });
  }

  /** Applies one execution report if it is the next for its order; see the class comment. */
  async apply(report: ExecutionReport, after?: AfterApply): Promise<Outcome> {
    return this.transact((trx) => this.#reports.applyIn(trx, report, after));
  }

  /** Hand-overs, cancels and amends that are due (claimed with a lease, so one process acts on each). */
  async routeDue(limit = 100): Promise<number> {
    const now = this.clock.now().getTime();
    const rows = await this.transact((trx) => claimDueOrders(trx, this.options.dialect, now, this.options.leaseMs, limit));
    for (const row of rows) {
      try {
        if (row.status === 'created' && row.pending_request === null) await this.handOver(row);
        else if (row.pending_request === 'pending_cancel') await this.cancel(row);
        else if (row.pending_request === 'pending_amend') await this.amend(row);
        else await this.#nothingToSend(row);
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

  /** Reads and applies what is new in one partner's report log (report-log-reader.ts). */
  pollConnector(key: string, connector: PartnerConnector): Promise<number> {
    return this.#logs.poll(key, connector);
  }

  /** Reads and applies one partner's report log to its end, in as many reads as it takes. */
  drainConnector(key: string, connector: PartnerConnector): Promise<number> {
    return this.#logs.drain(key, connector);
  }
}

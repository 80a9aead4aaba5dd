import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { lastReportSeqs } from '../orders/order.repository.js';
import { atCommit, flushAtCommit } from '../storage/at-commit.js';
import type { Transact } from '../storage/database.js';
import type { Database } from '../storage/schema.js';
import { classifyReport, ConnectorUnavailableError, type ExecutionReport, type PartnerConnector } from './connector.js';
import { leaseConnector, savePosition } from './position.repository.js';
import type { Outcome, ReportApplier } from './report-applier.js';

/** Reports of a partner's log applied in one transaction by the routing loop. */
const APPLY_CHUNK = 100;

/** Reports read from a partner's log at a time. */
const READ_LIMIT = 500;

/**
 * The routing loop's reading of the partners' report logs (connector.ts, 4.): one process at a time
 * reads a log, under a lease, from the position stored for it, and applies what is new in order.
 */
export class ReportLogReader {
  /** The report logs this process holds the lease of: where it stopped, and until when the lease runs. */
  readonly #held = new Map<string, { position: string | null; until: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly reports: ReportApplier,
    private readonly clock: Clock,
    private readonly options: { owner: string; leaseMs: number },
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Reads the partner's report log from where this deployment stopped, under a lease (one process
   * reads each log at a time), and applies what is new. The lease and the position are written only
   * when they change: while this process holds the lease with more than half of it left it reads on
   * from the position it keeps, and a poll that found nothing new writes nothing, so an idle partner
   * costs no commit on every tick.
   */
  async poll(key: string, connector: PartnerConnector): Promise<number> {
    return (await this.#pollOnce(key, connector)).applied;
  }

  /**
   * Reads the partner's report log to its end as it stands now, in as many reads as it takes (`poll`
   * reads at most READ_LIMIT reports), so that everything the partner reported is applied when it
   * returns: a test clock's advance answers only then. Stops early at a gap, or when another process
   * holds the log's lease.
   */
  async drain(key: string, connector: PartnerConnector): Promise<number> {
    let applied = 0;
    for (;;) {
      const read = await this.#pollOnce(key, connector);
      applied += read.applied;
      if (!read.more) return applied;
    }
  }

  /** One read of the log and what it applied; `more` when the read was full, so that more may follow. */
  async #pollOnce(key: string, connector: PartnerConnector): Promise<{ applied: number; more: boolean }> {
    const now = this.clock.now().getTime();
    let held = this.#held.get(key);
    if (held === undefined || now >= held.until - this.options.leaseMs / 2) {
      const lease = await this.transact((trx) => leaseConnector(trx, key, this.options.owner, now, this.options.leaseMs));
      if (lease === null) {
        this.#held.delete(key);
        return { applied: 0, more: false };
      }
      held = { position: lease.position, until: now + this.options.leaseMs };
      this.#held.set(key, held);
    }
    let batch;
    try {
      batch = await connector.reports(held.position, { limit: READ_LIMIT });
    } catch (error) {
      if (error instanceof ConnectorUnavailableError) return { applied: 0, more: false };
      throw error;
    }
    // Reports already applied (an answer the request path applied itself, a log read again from
    // its start) are passed over without opening a transaction that would lock their order.
    const appliedUpTo =
      batch.reports.length === 0
        ? new Map<string, number>()
        : await lastReportSeqs(
            this.db,
            batch.reports.map((r) => r.order_id),
          );
    const pending = batch.reports.filter((r) => {
      const last = appliedUpTo.get(r.order_id);
      return last === undefined || classifyReport(last, r) !== 'duplicate';
    });
    const position = batch.position;
    const save = position === held.position ? null : { key, position };
    let applied = 0;
    // The rest in transactions of APPLY_CHUNK reports; the position moves with the last of them,
    // once every report of the batch is applied.
    for (let from = 0; from < pending.length; from += APPLY_CHUNK) {
      const chunk = pending.slice(from, from + APPLY_CHUNK);
      const last = from + APPLY_CHUNK >= pending.length;
      let done: { applied: number; stopped: boolean };
      try {
        done = await this.transact((trx) => this.#applyInOrder(trx, chunk, last ? save : null));
      } catch (error) {
        // A report of the chunk failed, and the chunk's transaction rolled back: each report again in
        // a transaction of its own, up to the one that fails.
        this.log.warn(
          { connector: key, reports: chunk.length, err: error },
          'a batch of execution reports failed; applying them one by one',
        );
        done = await this.#applyOneByOne(chunk);
      }
      applied += done.applied;
      if (done.stopped) return { applied, more: false };
    }
    if (pending.length === 0 && save !== null) await this.transact((trx) => savePosition(trx, key, this.options.owner, position));
    held.position = position;
    return { applied, more: batch.reports.length >= READ_LIMIT && position !== null && save !== null };
  }

  /**
   * Applies `reports` in `trx`, in order; stops at a gap (an earlier report of an order is missing),
   * leaving the log's position where it was, so that they are read again next time. `save`: the
   * log's position to store after the last one.
   */
  async #applyInOrder(
    trx: Kysely<Database>,
    reports: readonly ExecutionReport[],
    save: { key: string; position: string | null } | null,
  ): Promise<{ applied: number; stopped: boolean }> {
    let applied = 0;
    // The chunk's orders are locked and read together; each report then leaves its order's next
    // state in `rows` for a later report of the same order.
    const rows = await this.reports.lockOrders(trx, reports);
    // A report's last writes go out with the COMMIT; a later report of the same order must see them.
    const touched = new Set<string>();
    for (const report of reports) {
      if (touched.has(report.order_id)) {
        await flushAtCommit(trx);
        touched.clear();
      }
      touched.add(report.order_id);
      const outcome = await this.reports.applyIn(trx, report, undefined, rows);
      if (outcome === 'gap') {
        this.#gap(report);
        return { applied, stopped: true };
      }
      if (outcome === 'applied') applied++;
    }
    // The position's move is the chunk's last write: it goes out with the COMMIT.
    if (save !== null) void atCommit(trx, () => savePosition(trx, save.key, this.options.owner, save.position));
    return { applied, stopped: false };
  }

  /** Each report in a transaction of its own, up to a gap or a report that fails (logged); the position stays. */
  async #applyOneByOne(reports: readonly ExecutionReport[]): Promise<{ applied: number; stopped: true }> {
    let applied = 0;
    for (const report of reports) {
      let outcome: Outcome;
      try {
        outcome = await this.transact((trx) => this.reports.applyIn(trx, report));
      } catch (error) {
        this.log.error(
          { order_id: report.order_id, seq: report.seq, report_id: report.report_id, err: error },
          'execution report could not be applied; read again next time',
        );
        break;
      }
      if (outcome === 'gap') {
        this.#gap(report);
        break;
      }
      if (outcome === 'applied') applied++;
    }
    return { applied, stopped: true };
  }

  #gap(report: ExecutionReport): void {
    this.log.warn({ order_id: report.order_id, seq: report.seq, report_id: report.report_id }, 'gap in execution reports; waiting');
  }
}

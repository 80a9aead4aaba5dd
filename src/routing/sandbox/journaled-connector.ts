import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { newId, type OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import type { Transact } from '../../storage/database.js';
import { ConnectorUnavailableError, type CancelResult, type OrderForPartner, type PartnerConnector, type ReportBatch, type SubmitResult } from '../connector.js';
import { PreparedInsert, PreparedQuery } from '../../storage/prepared.js';
import { SgiSimulator } from './simulator.js';

// The journal's two statements run on every call to a sandbox partner: prepared once.
const journalInsert = new PreparedInsert('sandbox_journal');
const journalAfter = new PreparedQuery(2, (qb, connector: string, after: string) =>
  qb.selectFrom('sandbox_journal').selectAll().where('connector', '=', connector).where('id', '>', after).orderBy('id'),
);

/**
 * A sandbox partner whose state survives restarts and is shared by every process of a deployment.
 * The simulated SGI is a pure function of the calls made to it and their times, so each call is
 * written to `sandbox_journal` and each instance replays the journal entries it has not seen before
 * answering. Positions in the report log are private to an instance (its epoch is random): a router
 * that reads with another instance's position starts from the beginning of the log, and drops what it
 * already applied by sequence number.
 */
export class JournaledSandboxConnector implements PartnerConnector {
  readonly name: string;
  readonly #simulator: SgiSimulator;
  #lastEntry = '';

  constructor(
    name: string,
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly clock: Clock,
  ) {
    this.name = name;
    this.#simulator = new SgiSimulator({ name, epoch: randomBytes(6).toString('hex') });
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    const at = await this.#record('submit', order.order_id, order);
    return this.#simulator.submit(order, at);
  }

  async cancel(orderId: OrderId): Promise<CancelResult> {
    const at = await this.#record('cancel', orderId, null);
    return this.#simulator.cancel(orderId, at);
  }

  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    await this.#catchUp();
    return this.#simulator.reports(since, this.clock.now().getTime(), options);
  }

  /** Journals a call (before making it, so that a failed attempt also counts) and returns its time. */
  async #record(kind: 'submit' | 'cancel', orderId: string, payload: OrderForPartner | null): Promise<number> {
    await this.#catchUp();
    const at = this.clock.now().getTime();
    const id = newId('event', at);
    await this.transact((trx) => journalInsert.run(trx, { id, connector: this.name, kind, order_id: orderId, payload: payload === null ? null : JSON.stringify(payload), at }));
    this.#lastEntry = id;
    return at;
  }

  async #catchUp(): Promise<void> {
    const entries = await journalAfter.execute(this.db, this.name, this.#lastEntry);
    for (const entry of entries) {
      try {
        if (entry.kind === 'submit') this.#simulator.submit(JSON.parse(entry.payload ?? '{}') as OrderForPartner, entry.at);
        else this.#simulator.cancel(entry.order_id as OrderId, entry.at);
      } catch (error) {
        // A replayed attempt that failed then (the partner was unavailable) fails again: expected.
        if (!(error instanceof ConnectorUnavailableError)) throw error;
      }
      this.#lastEntry = entry.id;
    }
  }
}

import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { newId, type OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import type { SandboxJournalTable } from '../routing.table.js';
import type { Transact } from '../../storage/database.js';
import {
  ConnectorUnavailableError,
  type AmendRequest,
  type AmendResult,
  type CancelRequest,
  type CancelResult,
  type OrderForPartner,
  type PartnerConnector,
  type ReportBatch,
  type SubmitResult,
} from '../connector.js';
import { atCommit } from '../../storage/at-commit.js';
import { PreparedInsert, PreparedQuery } from '../../storage/prepared.js';
import type { SessionRule } from './session.js';
import { SgiSimulator } from './simulator.js';

export interface JournaledOptions {
  /** The journal's key (default: the name); an instance on a test clock has its own. */
  journal?: string;
  /** The exchanges' sessions the simulated market follows (default: always open). */
  session?: SessionRule;
  /** The partner's time, when it is not the clock's (the time of a test clock, read from the database). */
  now?: () => Promise<number>;
}

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
  readonly #journal: string;
  readonly #now: () => Promise<number>;
  #lastEntry = '';

  constructor(
    name: string,
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    clock: Clock,
    options: JournaledOptions = {},
  ) {
    this.name = name;
    this.#journal = options.journal ?? name;
    this.#now = options.now ?? (async () => clock.now().getTime());
    this.#simulator = new SgiSimulator({ name, epoch: randomBytes(6).toString('hex'), ...(options.session === undefined ? {} : { session: options.session }) });
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    const at = await this.#record('submit', order.order_id, order);
    return this.#simulator.submit(order, at);
  }

  async cancel(orderId: OrderId, request: CancelRequest): Promise<CancelResult> {
    const at = await this.#record('cancel', orderId, request);
    return this.#simulator.cancel(orderId, request, at);
  }

  async amend(orderId: OrderId, request: AmendRequest): Promise<AmendResult> {
    const at = await this.#record('amend', orderId, request);
    return this.#simulator.amend(orderId, request, at);
  }

  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    await this.#catchUp();
    return this.#simulator.reports(since, await this.#now(), options);
  }

  /** Journals a call (before making it, so that a failed attempt also counts) and returns its time. */
  async #record(kind: SandboxJournalTable['kind'], orderId: string, payload: OrderForPartner | CancelRequest | AmendRequest): Promise<number> {
    const at = await this.#now();
    const id = newId('event', at);
    // The entries not seen yet are read, and this call's written, in one transaction whose
    // statements go out together (one round trip on PostgreSQL); the read does not see the new entry.
    const { unseen } = await this.transact(async (trx) => {
      const read = journalAfter.execute(trx, this.#journal, this.#lastEntry);
      read.catch(() => undefined);
      void atCommit(trx, () => journalInsert.run(trx, { id, connector: this.#journal, kind, order_id: orderId, payload: JSON.stringify(payload), at }));
      // Not awaited here: the read is answered before the COMMIT sent behind it.
      return { unseen: read };
    });
    this.#replay(await unseen);
    this.#lastEntry = id;
    return at;
  }

  async #catchUp(): Promise<void> {
    this.#replay(await journalAfter.execute(this.db, this.#journal, this.#lastEntry));
  }

  #replay(entries: SandboxJournalTable[]): void {
    for (const entry of entries) {
      try {
        replay(this.#simulator, entry);
      } catch (error) {
        // A replayed attempt that failed then (the partner was unavailable) fails again: expected.
        if (!(error instanceof ConnectorUnavailableError)) throw error;
      }
      this.#lastEntry = entry.id;
    }
  }
}

/**
 * Makes a journaled call again. Entries written before time in force and request ids existed (a
 * submit without `time_in_force`, a cancel without a payload) are read as a `gtc` order and a
 * requested cancel, which is how those calls behaved.
 */
function replay(simulator: SgiSimulator, entry: SandboxJournalTable): void {
  const orderId = entry.order_id as OrderId;
  const payload = entry.payload === null ? null : (JSON.parse(entry.payload) as Record<string, unknown>);
  switch (entry.kind) {
    case 'submit':
      simulator.submit({ time_in_force: 'gtc', expire_date: null, ...payload } as unknown as OrderForPartner, entry.at);
      return;
    case 'cancel':
      simulator.cancel(orderId, (payload ?? { request_id: `${orderId}.cancel`, reason: 'requested' }) as unknown as CancelRequest, entry.at);
      return;
    case 'amend':
      simulator.amend(orderId, payload as unknown as AmendRequest, entry.at);
      return;
  }
}

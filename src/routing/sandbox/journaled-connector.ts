import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { deterministicId, newId, type OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import { dialectOfDatabase } from '../../storage/dialect.js';
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
 * Both in one statement, where the dialect allows it: the call's entry written and the entries past
 * `after` read (the read does not see the new entry), committed on its own.
 */
const journalWriteAndAfter = new PreparedQuery(
  7,
  (qb, id: string, connector: string, kind: SandboxJournalTable['kind'], orderId: string, payload: string, at: number, after: string) =>
    qb
      .with('written', (w) =>
        w.insertInto('sandbox_journal').values({ id, connector, kind, order_id: orderId, payload, at }).returning('id'),
      )
      .selectFrom('sandbox_journal')
      .selectAll()
      .where('connector', '=', connector)
      .where('id', '>', after)
      .orderBy('id'),
);

/**
 * How late an entry may become visible after its id was made: the duration of the writer's
 * transaction. Another process's entry can commit after a newer one, so reading only past the newest
 * id seen would miss it for good; the look-back reads the ids of this window again.
 */
const LATE_ENTRY_MS = 5000;
/** Entries fetched by id in one statement at most (well under both dialects' parameter limits). */
const FETCH_CHUNK = 500;

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
  readonly #writesInWith: boolean;
  /** The newest entry replayed (or written) here. */
  #lastEntry = '';
  /** Every entry older than this one is replayed here. */
  #floor = '';
  /** The entries at or after `#floor` replayed here, so that the look-back replays none twice. */
  readonly #seen = new Set<string>();

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
    this.#writesInWith = dialectOfDatabase(db).writesInWith;
    this.#simulator = new SgiSimulator({
      name,
      epoch: randomBytes(6).toString('hex'),
      ...(options.session === undefined ? {} : { session: options.session }),
    });
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    const at = await this.#record('submit', order.order_id, order);
    return this.#simulator.submit(order, at);
  }

  async cancel(orderId: OrderId, request: CancelRequest): Promise<CancelResult> {
    // The order may have been submitted by another process: its entry is read even if it came late.
    await this.#catchUp(true);
    const at = await this.#record('cancel', orderId, request);
    return this.#simulator.cancel(orderId, request, at);
  }

  async amend(orderId: OrderId, request: AmendRequest): Promise<AmendResult> {
    await this.#catchUp(true);
    const at = await this.#record('amend', orderId, request);
    return this.#simulator.amend(orderId, request, at);
  }

  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    await this.#catchUp(true);
    return this.#simulator.reports(since, await this.#now(), options);
  }

  /**
   * Journals a call (before making it, so that a failed attempt also counts) and returns its time.
   * The entries past the newest one seen are read, and this call's written, together: on PostgreSQL
   * in one statement, which commits on its own; on SQLite in one transaction. The read does not see
   * the new entry.
   */
  async #record(
    kind: SandboxJournalTable['kind'],
    orderId: string,
    payload: OrderForPartner | CancelRequest | AmendRequest,
  ): Promise<number> {
    // The set of recent ids stays bounded in a process that only submits.
    if (this.#seen.size > 50_000) await this.#catchUp(true);
    const at = await this.#now();
    const id = newId('event', at);
    if (this.#writesInWith) {
      const payloadText = JSON.stringify(payload);
      for (const entry of await journalWriteAndAfter.execute(this.db, id, this.#journal, kind, orderId, payloadText, at, this.#lastEntry))
        this.#apply(entry);
      this.#saw(id);
      return at;
    }
    const { unseen } = await this.transact(async (trx) => {
      const read = journalAfter.execute(trx, this.#journal, this.#lastEntry);
      read.catch(() => undefined);
      void atCommit(trx, () =>
        journalInsert.run(trx, { id, connector: this.#journal, kind, order_id: orderId, payload: JSON.stringify(payload), at }),
      );
      // Not awaited here: the read is answered before the COMMIT sent behind it.
      return { unseen: read };
    });
    for (const entry of await unseen) this.#apply(entry);
    this.#saw(id);
    return at;
  }

  /**
   * Replays the entries not replayed here yet. The quick form reads past the newest entry seen (a
   * submit needs nothing else); `lookBack` also reads again the ids of the last LATE_ENTRY_MS, where
   * another process's entry may have committed after newer ones, and replays those it had missed.
   */
  async #catchUp(lookBack = false): Promise<void> {
    // The set of recent ids stays bounded in a process that only submits.
    if (this.#seen.size > 50_000) lookBack = true;
    if (!lookBack) {
      for (const entry of await journalAfter.execute(this.db, this.#journal, this.#lastEntry)) this.#apply(entry);
      return;
    }
    const now = await this.#now();
    const ids = await this.db
      .selectFrom('sandbox_journal')
      .select('id')
      .where('connector', '=', this.#journal)
      .where('id', '>', this.#floor)
      .orderBy('id')
      .execute();
    const missing = ids.map((row) => row.id).filter((id) => !this.#seen.has(id));
    for (let i = 0; i < missing.length; i += FETCH_CHUNK) {
      const entries = await this.db
        .selectFrom('sandbox_journal')
        .selectAll()
        .where('id', 'in', missing.slice(i, i + FETCH_CHUNK))
        .orderBy('id')
        .execute();
      for (const entry of entries) this.#apply(entry);
    }
    // Everything read up to now; an entry older than the window that is not visible yet never will be.
    const floor = deterministicId('event', Math.max(0, now - LATE_ENTRY_MS), '');
    if (floor > this.#floor) {
      this.#floor = floor;
      for (const id of this.#seen) if (id < floor) this.#seen.delete(id);
    }
  }

  #apply(entry: SandboxJournalTable): void {
    if (this.#seen.has(entry.id) || entry.id < this.#floor) return;
    try {
      replay(this.#simulator, entry);
    } catch (error) {
      // A replayed attempt that failed then (the partner was unavailable) fails again: expected.
      if (!(error instanceof ConnectorUnavailableError)) throw error;
    }
    this.#saw(entry.id);
  }

  #saw(id: string): void {
    this.#seen.add(id);
    if (id > this.#lastEntry) this.#lastEntry = id;
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
      simulator.cancel(
        orderId,
        (payload ?? { request_id: `${orderId}.cancel`, reason: 'requested' }) as unknown as CancelRequest,
        entry.at,
      );
      return;
    case 'amend':
      simulator.amend(orderId, payload as unknown as AmendRequest, entry.at);
      return;
  }
}

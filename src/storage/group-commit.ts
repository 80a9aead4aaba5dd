import type { Kysely } from 'kysely';
import { discardAtCommit, takeAtCommit } from './at-commit.js';
import { runStatement, transaction } from './prepared.js';
import type { Database } from './schema.js';

interface Unit {
  work: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Most units in one commit; a bound so that one commit never holds the writer for long. */
const MAX_BATCH = 256;

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync, and SQLite has one
 * writer, so one transaction per request caps throughput at the disk's fsync rate. Instead, units of
 * work queued while a commit is in progress run one after another inside the next transaction, each
 * in its own savepoint, and are answered together once that transaction has committed durably. A unit
 * that fails is rolled back to its savepoint and fails alone; if the commit itself fails, every unit
 * of the batch fails (nothing of it was written). Nothing is acknowledged before it is durable.
 *
 * A unit must only use the database handle it is given and must never wait for another request:
 * units of one batch run in sequence on the one connection.
 */
export class GroupCommitter {
  #queue: Unit[] = [];
  #draining = false;
  /**
   * Figures for /metrics: batches committed and the units in them, and the time the writer connection
   * spent on them, from BEGIN to the end of the last unit (`workSeconds`: the units' statements and
   * savepoints) and in COMMIT (`commitSeconds`: writing the batch's pages to the WAL, the fsync, and
   * SQLite's automatic checkpoint when it falls due). Batches run one at a time, so the two together
   * over a span of time are the share of it the writer was busy; better-sqlite3 runs every statement
   * on the event loop, so that is also event-loop time.
   */
  readonly stats = { batches: 0, units: 0, workSeconds: 0, commitSeconds: 0 };

  constructor(private readonly db: Kysely<Database>) {}

  run<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        // One turn of the event loop before taking the batch: the requests whose data arrived
        // meanwhile (and the callers just answered, who continue in microtasks) can queue their units
        // too. Without it each batch holds the single unit that woke the loop.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const batch = this.#queue.splice(0, MAX_BATCH);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        // Set once BEGIN has taken the write lock (a wait for another process's lock is not counted).
        let begun: number | undefined;
        let worked: number | undefined;
        try {
          await transaction(this.db, async (trx) => {
            begun = performance.now();
            for (const unit of batch) {
              await runStatement(trx, 'savepoint cauri_unit');
              try {
                const value = await unit.work(trx);
                for (const write of takeAtCommit(trx)) await write();
                await runStatement(trx, 'release savepoint cauri_unit');
                outcomes.push({ ok: true, value });
              } catch (error) {
                discardAtCommit(trx, error);
                await runStatement(trx, 'rollback to savepoint cauri_unit');
                await runStatement(trx, 'release savepoint cauri_unit');
                outcomes.push({ ok: false, error });
              }
            }
            worked = performance.now();
          });
        } catch (error) {
          this.#time(begun, worked);
          for (const unit of batch) unit.reject(error);
          continue;
        }
        this.#time(begun, worked);
        this.stats.batches++;
        this.stats.units += batch.length;
        batch.forEach((unit, i) => {
          const outcome = outcomes[i];
          if (outcome?.ok === true) unit.resolve(outcome.value);
          else unit.reject(outcome?.error);
        });
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Adds a batch's time: `begun` to `worked` running its units, then to now in COMMIT (or ROLLBACK). */
  #time(begun: number | undefined, worked: number | undefined): void {
    if (begun === undefined) return;
    const ended = performance.now();
    const end = worked ?? ended;
    this.stats.workSeconds += (end - begun) / 1000;
    this.stats.commitSeconds += (ended - end) / 1000;
  }
}

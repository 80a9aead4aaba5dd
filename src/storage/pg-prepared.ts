import type { Writable } from 'node:stream';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/** Statement texts given a name at most, per process; later texts run unnamed. */
const MAX_NAMED = 1000;

/** PostgreSQL's answer when a prepared statement's result columns changed under it (a column added to a table read with `select *`). */
function isStaleResultType(error: unknown): boolean {
  return (error as { code?: unknown }).code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message));
}

/**
 * What the process sent to PostgreSQL, for /metrics and for the test that holds order submission to
 * its budget (docs/performance.md): statements, round trips (a statement sent while none of its
 * connection's is awaiting an answer starts one; statements pipelined behind it share it), and
 * transactions (a BEGIN actually sent).
 */
export interface WireStats {
  statements: number;
  roundTrips: number;
  transactions: number;
}

export interface WirePoolOptions {
  /** Run each statement that has parameters as a named prepared statement (see below). */
  prepare: boolean;
  /**
   * Called when a statement that changes a table processes keep in memory (clients, client_secrets)
   * has run, and again when its transaction ends (see ChangeListener).
   */
  touchedKept?: () => void;
}

/** A statement that changes a table whose rows processes keep in memory (see ChangeListener). */
const KEPT_WRITE = /^\s*(insert\s+into|update|delete\s+from)\s+"?(clients|client_secrets)"?\s/i;

/**
 * The pool Kysely's PostgreSQL dialect is given: it counts what is sent (WireStats), defers each
 * transaction's BEGIN so that it travels with the transaction's first statement (the pool's clients
 * run in pg's pipeline mode, so the two share one round trip), and optionally names statements.
 *
 * Named prepared statements: PostgreSQL parses each once per connection, not at every execution, and
 * may keep its plan. Measured on order submission (about 25 statements an order, 50 connections):
 * 265 to 302 orders a second, the mean of 4 alternating runs of 8 s, faster in each pair. Names are
 * given per statement text, the same on every connection (`cauri_1`, `cauri_2`, ...), to at most
 * 1,000 texts in a process; statements without parameters (`begin`, `commit`) use the simple
 * protocol as before.
 *
 * When the schema changes under a running process (another version migrated it during a rolling
 * deploy) and a prepared statement's result columns no longer match, PostgreSQL refuses it. The
 * statement's text is then run unnamed in this process from then on; outside a transaction the
 * refused execution is retried at once, unnamed; inside one the error ends the transaction, as any
 * error does.
 */
export class WirePool implements PostgresPool {
  readonly #names = new Map<string, string>();
  /** Texts that must run unnamed (their prepared form was refused). */
  readonly #unnamed = new Set<string>();
  readonly stats: WireStats = { statements: 0, roundTrips: 0, transactions: 0 };

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: WirePoolOptions,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    return new WireClient(await this.pool.connect(), this);
  }

  async end(): Promise<void> {
    await this.pool.end();
  }

  /** The name for `text`, or undefined when it runs unnamed. */
  nameOf(text: string): string | undefined {
    if (!this.options.prepare || this.#unnamed.has(text)) return undefined;
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < MAX_NAMED) {
      name = `cauri_${this.#names.size + 1}`;
      this.#names.set(text, name);
    }
    return name;
  }

  refuse(text: string): void {
    this.#unnamed.add(text);
  }

  touchedKept(): void {
    this.options.touchedKept?.();
  }
}

const TRANSACTION_START = /^(begin|start\s+transaction)\b/;
// `rollback to savepoint` keeps the transaction open.
const TRANSACTION_END = /^(commit|end|abort|rollback(?!\s+to\b))\b/;

const EMPTY = { rows: [], command: 'BEGIN', rowCount: null } as unknown as PostgresQueryResult<never>;

class WireClient implements PostgresPoolClient {
  /** Between `begin` and its `commit` or `rollback` (Kysely's transactions send them as statements). */
  #inTransaction = false;
  /** A BEGIN asked for and not sent yet: it goes with the transaction's first statement. */
  #deferredBegin: string | undefined;
  /** Statements sent on this connection and not answered yet. */
  #awaiting = 0;
  /** The open transaction changed a kept table. */
  #touchedKept = false;
  /** The socket holds its writes until the current turn's statements are all queued. */
  #corked = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly pool: WirePool,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sqlOrCursor !== 'string') return this.client.query(sqlOrCursor as never) as unknown as PostgresCursor<R>;
    const text = sqlOrCursor;
    const values = parameters === undefined ? [] : [...parameters];
    if (values.length === 0) {
      const head = text.trimStart().slice(0, 24).toLowerCase();
      if (TRANSACTION_START.test(head)) {
        this.#inTransaction = true;
        this.#deferredBegin = text;
        return Promise.resolve(EMPTY);
      }
      if (TRANSACTION_END.test(head)) {
        this.#inTransaction = false;
        // A transaction that sent nothing has nothing to end.
        if (this.#deferredBegin !== undefined) {
          this.#deferredBegin = undefined;
          return Promise.resolve(EMPTY);
        }
        if (this.#touchedKept) {
          this.#touchedKept = false;
          return this.#send<R>(text, []).finally(() => this.pool.touchedKept());
        }
      }
    }
    if (KEPT_WRITE.test(text)) {
      if (this.#inTransaction) this.#touchedKept = true;
      return this.#withBegin(() => this.#run<R>(text, values)).finally(() => this.pool.touchedKept());
    }
    return this.#withBegin(() => this.#run<R>(text, values));
  }

  /** Sends the deferred BEGIN, if any, and `statement` right behind it, without waiting in between. */
  async #withBegin<R>(statement: () => Promise<R>): Promise<R> {
    const begin = this.#deferredBegin;
    if (begin === undefined) return statement();
    this.#deferredBegin = undefined;
    this.pool.stats.transactions++;
    const begun = this.#send<unknown>(begin, []);
    const answer = statement();
    // BEGIN fails only with its connection, and then so does the statement behind it.
    await begun.catch(() => undefined);
    return answer;
  }

  #run<R>(text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    const name = values.length === 0 ? undefined : this.pool.nameOf(text);
    if (name === undefined) return this.#send<R>(text, values);
    return this.#named<R>(name, text, values);
  }

  async #named<R>(name: string, text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    try {
      return await this.#send<R>({ name, text, values });
    } catch (error) {
      if (!isStaleResultType(error)) throw error;
      this.pool.refuse(text);
      if (this.#inTransaction) throw error;
      return await this.#send<R>(text, values);
    }
  }

  async #send<R>(query: string | pg.QueryConfig, values?: unknown[]): Promise<PostgresQueryResult<R>> {
    const stats = this.pool.stats;
    stats.statements++;
    if (this.#awaiting === 0) stats.roundTrips++;
    this.#awaiting++;
    this.#cork();
    try {
      return (await (typeof query === 'string'
        ? this.client.query(query, values)
        : this.client.query(query))) as unknown as PostgresQueryResult<R>;
    } finally {
      this.#awaiting--;
    }
  }

  /**
   * The driver writes each protocol message of a statement (bind, execute, sync) to the socket as it
   * makes it: one system call each. Corked until the statements queued in this turn of the event loop
   * are all written, they leave in one write.
   */
  #cork(): void {
    if (this.#corked) return;
    const stream = (this.client as unknown as { connection?: { stream?: Writable } }).connection?.stream;
    if (stream === undefined || typeof stream.cork !== 'function') return;
    this.#corked = true;
    stream.cork();
    process.nextTick(() => {
      this.#corked = false;
      stream.uncork();
    });
  }

  release(): void {
    this.#deferredBegin = undefined;
    this.#inTransaction = false;
    this.#touchedKept = false;
    this.client.release();
  }
}

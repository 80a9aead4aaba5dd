import SqliteDatabase from 'better-sqlite3';
import {
  type CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import type { DirectStatement } from './prepared.js';

/**
 * SQLite with one writer and one reader. In WAL mode a reader never waits for the writer, but a
 * single connection serialises everything: while a transaction is open (and SQLite commits block the
 * thread on fsync), every read of every other request queues behind it. Here reads outside a
 * transaction run on a read-only connection and see the last committed state; transactions and
 * writes take the writer connection, one at a time. Streams get a read-only handle of their own,
 * since an open iterator keeps its connection busy.
 *
 * Statements are cached per connection by their SQL text: better-sqlite3 compiles a statement on
 * every prepare, which costs more than running a point query, and Kysely's SQL for one query shape is
 * always the same (values are parameters).
 */
class StatementCache {
  readonly #statements = new Map<string, SqliteDatabase.Statement>();
  constructor(readonly handle: SqliteDatabase.Database) {}

  prepare(sql: string): SqliteDatabase.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      if (this.#statements.size >= 1000) this.#statements.clear();
      statement = this.handle.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** How long a writer waits for another process to release SQLite's write lock before failing. */
export const WRITE_LOCK_TIMEOUT_MS = 5000;

function isBusy(error: unknown): boolean {
  return error instanceof SqliteDatabase.SqliteError && (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_'));
}

/**
 * Runs `attempt` until it does not fail with SQLITE_BUSY, waiting between tries on timers. SQLite's
 * own busy_timeout would wait inside the call, and better-sqlite3 calls are synchronous: the whole
 * process (every request, and any other connection of the same process that holds the lock and would
 * release it) would stand still meanwhile. Only statements that changed nothing when they failed
 * with SQLITE_BUSY are given here: BEGIN IMMEDIATE and single statements outside a transaction.
 */
async function whenNotBusy<T>(attempt: () => T): Promise<T> {
  const deadline = performance.now() + WRITE_LOCK_TIMEOUT_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error) || performance.now() + wait > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function run(statement: SqliteDatabase.Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(...parameters) };
  const { changes, lastInsertRowid } = statement.run(...parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves with the release function once every earlier holder has released. */
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const previous = this.#tail;
    this.#tail = previous.then(() => next);
    return previous.then(() => release);
  }
}

class RoutingConnection implements DatabaseConnection {
  /** Set while the connection carries a transaction: everything then runs on the writer. */
  release: (() => void) | null = null;

  constructor(private readonly driver: RoutingSqliteDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer } = this.driver;
    if (this.release !== null) return run(writer.prepare(query.sql), query.parameters) as QueryResult<R>;
    const rows = this.driver.readCommitted(query.sql, query.parameters);
    if (rows !== undefined) return { rows: rows as R[] };
    // A write outside a transaction (or any statement without a reader): the writer, for this one statement.
    const release = await this.driver.writerLock.lock();
    try {
      const statement = writer.prepare(query.sql);
      return (await whenNotBusy(() => {
        this.driver.endSnapshots();
        return run(statement, query.parameters);
      })) as QueryResult<R>;
    } finally {
      release();
    }
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('only select queries can be streamed');
    if (this.release !== null || this.driver.reader === null) {
      for (const row of this.driver.writer.prepare(query.sql).iterate(...query.parameters)) yield { rows: [row as R] };
      return;
    }
    const handle = new SqliteDatabase(this.driver.path, { readonly: true });
    try {
      for (const row of handle.prepare(query.sql).iterate(...query.parameters)) yield { rows: [row as R] };
    } finally {
      handle.close();
    }
  }
}

/** Every driver of this process, so that a commit through one ends the read snapshots of all. */
const DRIVERS = new Set<RoutingSqliteDriver>();

class RoutingSqliteDriver implements Driver {
  readonly writerLock = new Mutex();
  readonly writer: StatementCache;
  readonly reader: StatementCache | null;
  /** True while the reader holds a read transaction: the snapshot of this turn of the event loop. */
  #snapshot = false;
  /** The reader's `data_version` read in the current snapshot; null until read. */
  #dataVersion: number | null = null;
  readonly #endSnapshot = (): void => {
    if (!this.#snapshot) return;
    this.#snapshot = false;
    this.#dataVersion = null;
    if (this.reader?.handle.inTransaction === true) this.reader.prepare('commit').run();
  };

  constructor(
    writer: SqliteDatabase.Database,
    reader: SqliteDatabase.Database | null,
    readonly path: string,
  ) {
    // Waiting for the write lock is done by whenNotBusy, on timers; see there.
    writer.pragma('busy_timeout = 0');
    this.writer = new StatementCache(writer);
    this.reader = reader === null ? null : new StatementCache(reader);
    DRIVERS.add(this);
  }

  /**
   * Runs a read-only statement on the read-only connection (the last committed state); undefined for
   * a statement that writes, or when there is no read-only connection.
   *
   * The reads of one turn of the event loop share one read transaction, opened by the first and
   * ended when the turn's I/O has been handled (setImmediate) or just before any connection of this
   * process commits (see endSnapshots). Starting a read transaction in WAL mode takes and releases a
   * lock on the shared index with system calls; sharing it made the authenticated read's two reads
   * (client status and resource) cost one. A snapshot is opened after the requests it serves arrived
   * (their data was ready when the loop woke) and ended before any later turn, so every read still
   * sees every commit acknowledged before its request arrived, another process's included.
   */
  readCommitted(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    return this.directRead(sql)?.(parameters);
  }

  /** readCommitted's statement prepared once, for a caller that runs it many times (PreparedQuery). */
  directRead(sql: string): DirectStatement | undefined {
    if (this.reader === null) return undefined;
    const statement = this.reader.prepare(sql);
    if (!statement.readonly || !statement.reader) return undefined;
    return (parameters) => {
      this.#beginSnapshot();
      return statement.all(...parameters);
    };
  }

  /**
   * `sql` prepared once on the writer, to be run only by the transaction that holds it (see
   * registerDirectStatements): a transaction owns the writer from its BEGIN to its end, and
   * better-sqlite3 runs the statement at once.
   */
  directStatement(sql: string): DirectStatement {
    const statement = this.writer.prepare(sql);
    return (parameters) => {
      if (!this.writer.handle.inTransaction) throw new Error(`direct statement outside a transaction: ${sql}`);
      return run(statement, parameters).rows;
    };
  }

  /**
   * The reader's `data_version`, in the current snapshot; null without a reader. It is read once per
   * snapshot (a turn of the event loop, ended before any commit of this process), so the requests of
   * one turn share one reading, as they share the snapshot.
   */
  dataVersion(): number | null {
    if (this.reader === null) return null;
    this.#beginSnapshot();
    this.#dataVersion ??= this.reader.prepare('pragma data_version').pluck().get() as number;
    return this.#dataVersion;
  }

  #beginSnapshot(): void {
    if (this.#snapshot || this.reader === null) return;
    this.reader.prepare('begin').run();
    this.#snapshot = true;
    setImmediate(this.#endSnapshot);
  }

  /**
   * Ends the read snapshot of every driver of this process. Called right before each commit (nothing
   * runs in between, better-sqlite3 being synchronous), so that every later read sees the commit, and
   * so that no snapshot of this process is open while SQLite checkpoints at commit: an open snapshot
   * stops the checkpoint short and keeps the WAL from starting over, and under a steady load the WAL
   * then grew without bound (300 MB in a minute of webhook deliveries; a test covers this).
   */
  endSnapshots(): void {
    for (const driver of DRIVERS) driver.#endSnapshot();
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutingConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as RoutingConnection;
    c.release = await this.writerLock.lock();
    try {
      // IMMEDIATE takes the write lock now, waiting out another process's writer.
      // A deferred BEGIN that reads first and then writes gets SQLITE_BUSY at once, without waiting,
      // when another process committed in between (its snapshot can no longer become a writer).
      const begin = this.writer.prepare('begin immediate');
      await whenNotBusy(() => begin.run());
    } catch (error) {
      c.release();
      c.release = null;
      throw error;
    }
  }

  async commitTransaction(): Promise<void> {
    this.endSnapshots();
    this.writer.prepare('commit').run();
  }

  async rollbackTransaction(): Promise<void> {
    if (this.writer.handle.inTransaction) this.writer.prepare('rollback').run();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as RoutingConnection;
    if (c.release !== null) {
      const release = c.release;
      c.release = null;
      release();
    }
  }

  async destroy(): Promise<void> {
    DRIVERS.delete(this);
    this.#endSnapshot();
    this.reader?.handle.close();
    this.writer.handle.close();
  }
}

/**
 * The page cache of each connection, in KiB (SQLite's default is 2,000). Pages are allocated as they
 * are read, so this is a ceiling. With the default the read-only connection kept re-reading pages
 * from the file: the authenticated read cost 107 µs a request, and 84 µs with this cache (one A/B run).
 */
export const SQLITE_CACHE_KIB = 32 * 1024;

/** The read-only connection beside the writer; null for an in-memory database (it has no second connection). */
export function openReader(path: string): SqliteDatabase.Database | null {
  if (path === ':memory:') return null;
  const reader = new SqliteDatabase(path, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  reader.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  return reader;
}

/** The Kysely dialect of the embedded database; `writer` must already be configured (WAL, pragmas). */
export class RoutingSqliteDialect implements Dialect {
  readonly #driver: RoutingSqliteDriver;

  constructor(writer: SqliteDatabase.Database, reader: SqliteDatabase.Database | null, path: string) {
    this.#driver = new RoutingSqliteDriver(writer, reader, path);
  }

  /** A read outside any transaction, prepared once (see registerDirectReads); undefined for a write. */
  directRead(sql: string): DirectStatement | undefined {
    return this.#driver.directRead(sql);
  }

  /** A statement for the transaction holding the writer (see registerDirectStatements). */
  directStatement(sql: string): DirectStatement {
    return this.#driver.directStatement(sql);
  }

  /** SQLite's `data_version` as the read-only connection sees it (see Storage.changeMarker); null without one. */
  dataVersion(): number | null {
    return this.#driver.dataVersion();
  }

  createDriver(): Driver {
    return this.#driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

import { PostgresAdapter, sql, type Kysely } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Every difference between SQLite and PostgreSQL that the services care about, in one place; the
 * repositories otherwise write one query for both. Services are given the dialect's name by the
 * composition root and reach its behaviour through `dialectOf`.
 *
 * Locking is the main difference. SQLite has one writer: a write transaction already excludes every
 * other writer of the database, of every process, so its locks are no-ops and its statements need no
 * row locks. PostgreSQL runs transactions side by side: named locks are advisory locks held until the
 * transaction ends, and reads that decide a write take row locks (FOR UPDATE, FOR SHARE, SKIP LOCKED).
 */
export interface SqlDialect {
  readonly name: DialectName;
  /** One writer at a time for the whole database, of every process (SQLite). */
  readonly singleWriter: boolean;
  /** Takes a transaction-scoped lock named by `key`, waiting for it. */
  lock(trx: Kysely<any>, key: string): Promise<void>;
  /** Tries a transaction-scoped lock without waiting; false when another transaction holds it. */
  tryLock(trx: Kysely<any>, key: string): Promise<boolean>;
  /**
   * Of two forms of a statement, the one this engine should run: `locking` (with its row-lock
   * clause) where reads take row locks, `plain` where the single writer makes them needless.
   */
  rowLocked<T>(forms: { locking: T; plain: T }): T;
  /** True when `error` is a unique or primary key violation. */
  isUniqueViolation(error: unknown): boolean;
  /**
   * A statement's WITH may hold an INSERT (PostgreSQL; not SQLite): a write and a read of the same
   * table in one statement, committed on its own, the read not seeing the write.
   */
  readonly writesInWith: boolean;
}

const postgres: SqlDialect = {
  name: 'postgres',
  singleWriter: false,
  async lock(trx, key) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
  },
  async tryLock(trx, key) {
    const result = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(trx);
    return result.rows[0]?.locked === true;
  },
  rowLocked: (forms) => forms.locking,
  isUniqueViolation: (error) => codeOf(error) === '23505',
  writesInWith: true,
};

const sqlite: SqlDialect = {
  name: 'sqlite',
  singleWriter: true,
  lock: async () => undefined,
  tryLock: async () => true,
  rowLocked: (forms) => forms.plain,
  isUniqueViolation: (error) => codeOf(error) === 'SQLITE_CONSTRAINT_UNIQUE' || codeOf(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  writesInWith: false,
};

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

export function dialectOf(name: DialectName): SqlDialect {
  return name === 'postgres' ? postgres : sqlite;
}

/**
 * The dialect of the database behind `db` (a handle or a transaction), for a repository function
 * that is given no dialect's name: told apart by Kysely's adapter.
 */
export function dialectOfDatabase(db: Kysely<any>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgres : sqlite;
}

/** True when `error` is a unique or primary key violation, in either engine. */
export function isUniqueViolation(error: unknown): boolean {
  return postgres.isUniqueViolation(error) || sqlite.isUniqueViolation(error);
}

/** Takes a transaction-scoped lock named by `key` (see SqlDialect.lock). */
export function lockForTransaction(trx: Kysely<any>, dialect: DialectName, key: string): Promise<void> {
  return dialectOf(dialect).lock(trx, key);
}

/** Tries a transaction-scoped lock without waiting (see SqlDialect.tryLock). */
export function tryLockForTransaction(trx: Kysely<any>, dialect: DialectName, key: string): Promise<boolean> {
  return dialectOf(dialect).tryLock(trx, key);
}

/** Liveness of the database for /readyz. */
export async function ping(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}

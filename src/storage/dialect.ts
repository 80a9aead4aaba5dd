import { sql, type Kysely } from 'kysely';

/**
 * Every difference between SQLite and PostgreSQL that the services care about lives here; the
 * repositories otherwise write one query for both.
 */
export type DialectName = 'sqlite' | 'postgres';

/** True when `error` is a unique or primary key violation, in either engine. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * Takes a transaction-scoped lock named by `key`. PostgreSQL: an advisory lock released at commit.
 * SQLite: nothing to do, because a write transaction already excludes every other writer.
 */
export async function lockForTransaction(trx: Kysely<any>, dialect: DialectName, key: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/** Tries a transaction-scoped lock without waiting; false when another transaction holds it. */
export async function tryLockForTransaction(trx: Kysely<any>, dialect: DialectName, key: string): Promise<boolean> {
  if (dialect !== 'postgres') return true;
  const result = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(trx);
  return result.rows[0]?.locked === true;
}

/** Liveness of the database for /readyz. */
export async function ping(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}

import type { Kysely } from 'kysely';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { IdempotencyTable } from './idempotency.table.js';

const recordInsert = new PreparedInsert('idempotency_keys');

export async function insertRecord(db: Kysely<Database>, row: IdempotencyTable): Promise<void> {
  await recordInsert.run(db, row);
}

const recordOfKey = new PreparedQuery(2, (qb, clientId: string, key: string) =>
  qb.selectFrom('idempotency_keys').selectAll().where('client_id', '=', clientId).where('key', '=', key),
);

export async function findRecord(db: Kysely<Database>, clientId: string, key: string): Promise<IdempotencyTable | undefined> {
  return recordOfKey.first(db, clientId, key);
}

/**
 * Takes the key's lock without waiting and reads its record, both sent at once: PostgreSQL runs the
 * read once the lock is taken, as a statement of its own (it sees the record of a holder that just
 * committed), in the same round trip. `locked` is false when another transaction holds the key.
 */
export async function lockAndFindRecord(
  db: Kysely<Database>,
  dialect: DialectName,
  lockKey: string,
  clientId: string,
  key: string,
): Promise<{ locked: boolean; record: IdempotencyTable | undefined }> {
  const [locked, record] = await Promise.all([dialectOf(dialect).tryLock(db, lockKey), findRecord(db, clientId, key)]);
  return { locked, record: locked ? record : undefined };
}

const recordCompletion = new PreparedQuery(4, (qb, status: number, body: string, clientId: string, key: string) =>
  qb
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: status, response_body: body })
    .where('client_id', '=', clientId)
    .where('key', '=', key)
    .where('state', '=', 'in_flight')
    .returning('key'),
);

/**
 * Marks an `in_flight` record done with its final response status and body. False when the record
 * was not in flight any more (another request completed it first): then nothing is written.
 */
export async function completeRecord(db: Kysely<Database>, clientId: string, key: string, status: number, body: string): Promise<boolean> {
  return (await recordCompletion.execute(db, status, body, clientId, key)).length > 0;
}

export async function deleteRecord(db: Kysely<Database>, clientId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('key', '=', key).execute();
}

export async function purgeExpired(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

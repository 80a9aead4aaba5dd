import type { Kysely } from 'kysely';
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

const responseRewrite = new PreparedQuery(4, (qb, clientId: string, key: string, body: string, status: number) =>
  qb.updateTable('idempotency_keys').set({ response_body: body, response_status: status }).where('client_id', '=', clientId).where('key', '=', key).where('state', '=', 'done'),
);

export async function rewriteResponse(db: Kysely<Database>, clientId: string, key: string, body: string, status: number): Promise<void> {
  await responseRewrite.execute(db, clientId, key, body, status);
}

export async function deleteRecord(db: Kysely<Database>, clientId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('key', '=', key).execute();
}

export async function purgeExpired(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

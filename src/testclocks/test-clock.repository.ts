import { sql, type Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { TestClockRow } from './test-clock.table.js';

export async function insertTestClock(db: Kysely<Database>, row: TestClockRow): Promise<void> {
  await db.insertInto('test_clocks').values(row).execute();
}

/** A live (not deleted) clock of the client. */
export async function findClientTestClock(db: Kysely<Database>, clientId: string, id: string): Promise<TestClockRow | undefined> {
  return db
    .selectFrom('test_clocks')
    .selectAll()
    .where('id', '=', id)
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The clock's time whether or not it was deleted (its orders keep living on it); undefined for an unknown id. */
export async function frozenTimeOf(db: Kysely<Database>, id: string): Promise<number | undefined> {
  const row = await db.selectFrom('test_clocks').select('frozen_time').where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : Number(row.frozen_time);
}

/** The client's live clocks, newest first, after the id `before` when given. */
export async function listClientTestClocks(
  db: Kysely<Database>,
  clientId: string,
  limit: number,
  before?: string,
): Promise<TestClockRow[]> {
  let query = db.selectFrom('test_clocks').selectAll().where('client_id', '=', clientId).where('deleted_at', 'is', null);
  if (before !== undefined) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function markTestClockDeleted(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('test_clocks').set({ deleted_at: now }).where('id', '=', id).where('deleted_at', 'is', null).execute();
}

/** Moves the clock from `from` to `to`; false when its time is no longer `from` (another advance moved it). */
export async function moveTestClock(db: Kysely<Database>, id: string, from: number, to: number): Promise<boolean> {
  const result = await db
    .updateTable('test_clocks')
    .set({ frozen_time: to })
    .where('id', '=', id)
    .where('frozen_time', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The earliest expiry at or before `by` among the clock's orders still waiting for it; null if none. */
export async function nextExpiryOnClock(db: Kysely<Database>, id: string, by: number): Promise<number | null> {
  const row = await db
    .selectFrom('orders')
    .select((eb) => eb.fn.min('expiry_due_at').as('due'))
    .where('test_clock_id', '=', id)
    .where('expiry_due_at', '<=', by)
    .executeTakeFirst();
  return row?.due === null || row?.due === undefined ? null : Number(row.due);
}

/** The (partner, connector) pairs of the clock's open orders: the report logs an advance reads. */
export async function connectorsOnClock(db: Kysely<Database>, id: string): Promise<{ rcpt_to: string; connector: string }[]> {
  return db
    .selectFrom('orders')
    .select(['rcpt_to', 'connector'])
    .distinct()
    .where('test_clock_id', '=', id)
    .where(sql<boolean>`status in ('created', 'routed', 'partially_filled')`)
    .execute();
}

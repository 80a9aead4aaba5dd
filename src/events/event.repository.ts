import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { EventRow } from './event.table.js';

export async function insertEvent(db: Kysely<Database>, row: EventRow): Promise<void> {
  await db.insertInto('events').values(row).execute();
}

/** Events not yet fanned out to webhook endpoints: the delivery backlog. */
export async function countPendingDispatch(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('dispatched_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

import type { Kysely } from 'kysely';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { EventRow } from './event.table.js';

const eventInsert = new PreparedInsert('events');

export async function insertEvent(db: Kysely<Database>, row: EventRow): Promise<void> {
  await eventInsert.run(db, row);
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

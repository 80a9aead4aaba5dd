import type { Kysely } from 'kysely';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { EventRow } from './event.table.js';

const eventInsert = new PreparedInsert('events');
const queueInsert = new PreparedInsert('event_queue');

/** Stores an event and, unless `queue` is false, queues it for the webhook fan-out, in the caller's transaction. */
export async function insertEvent(db: Kysely<Database>, row: EventRow, queue: boolean): Promise<void> {
  await eventInsert.run(db, row);
  if (queue) await queueInsert.run(db, { event_id: row.id });
}

/** Events not yet fanned out to webhook endpoints: the delivery backlog. */
export async function countPendingDispatch(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('event_queue')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

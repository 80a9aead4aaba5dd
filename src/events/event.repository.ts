import type { Kysely, SelectQueryBuilder } from 'kysely';
import { dialectOfDatabase } from '../storage/dialect.js';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { EventRow } from './event.table.js';

const eventInsert = new PreparedInsert('events');
const queueInsert = new PreparedInsert('event_queue');

const COLUMNS = [
  'id',
  'client_id',
  'type',
  'livemode',
  'created_at',
  'data',
  'subject_ref',
  'origin',
] as const satisfies readonly (keyof EventRow)[];
/** The event and its queue entry in one statement, the entry written in its WITH (PostgreSQL). */
const queuedEventInsert = new PreparedQuery(COLUMNS.length, (qb, ...values: unknown[]) =>
  qb
    .with('queued', (w) =>
      w
        .insertInto('event_queue')
        .values({ event_id: values[0] as string })
        .returning('event_id'),
    )
    .insertInto('events')
    .values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as unknown as EventRow),
);

/** Stores an event and, unless `queue` is false, queues it for the webhook fan-out, in the caller's transaction. */
export async function insertEvent(db: Kysely<Database>, row: EventRow, queue: boolean): Promise<void> {
  if (queue && dialectOfDatabase(db).writesInWith) {
    await queuedEventInsert.execute(db, ...COLUMNS.map((column) => row[column] ?? null));
    return;
  }
  // Both sent at once (PostgreSQL pipelines them: one round trip), the event first.
  await Promise.all([eventInsert.run(db, row), ...(queue ? [queueInsert.run(db, { event_id: row.id })] : [])]);
}

/** Events not yet fanned out to webhook endpoints: the delivery backlog. */
export async function countPendingDispatch(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('event_queue')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A query of the events table, to which `clientEvents` adds the client's condition, the order and the limit. */
export type EventQuery = SelectQueryBuilder<Database, 'events', EventRow>;

/**
 * The events a client sees, its own and those addressed to every client (client_id null), that
 * `refine` keeps, in id order, at most `limit`. Each of the two sets is a range of
 * `events_client_id (client_id, id)`, read in order and cut at `limit`; their union is then sorted
 * and cut again, so a page costs the same whatever the client's history. A single
 * `client_id = ? or client_id is null` made both engines read every matching event and sort them all
 * for each page (on SQLite a multi-index OR and a temporary b-tree for the ORDER BY).
 */
export function clientEventsQuery(
  db: Kysely<Database>,
  clientId: string,
  direction: 'asc' | 'desc',
  limit: number,
  refine: (query: EventQuery) => EventQuery = (query) => query,
) {
  const own = refine(db.selectFrom('events').selectAll().where('client_id', '=', clientId))
    .orderBy('id', direction)
    .limit(limit);
  const everyone = refine(db.selectFrom('events').selectAll().where('client_id', 'is', null))
    .orderBy('id', direction)
    .limit(limit);
  return db
    .selectFrom(own.as('own'))
    .selectAll()
    .unionAll(db.selectFrom(everyone.as('everyone')).selectAll())
    .orderBy('id', direction)
    .limit(limit);
}

/** `clientEventsQuery`, run. */
export async function clientEvents(
  db: Kysely<Database>,
  clientId: string,
  direction: 'asc' | 'desc',
  limit: number,
  refine?: (query: EventQuery) => EventQuery,
): Promise<EventRow[]> {
  return clientEventsQuery(db, clientId, direction, limit, refine).execute();
}

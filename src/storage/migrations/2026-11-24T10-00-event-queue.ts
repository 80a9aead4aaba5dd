import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Events waiting to be fanned out to webhook endpoints, as a queue of their ids. Before, an event was
// marked fanned out by setting `events.dispatched_at`, which rewrote the event's row (its data, about
// a kilobyte) and moved it in an index; the worker's commits wrote those pages again for every event.
// Taking an id off a narrow queue writes a fraction of that. Events are queued in the transaction
// that records them (recordEvent).
export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = !(db.getExecutor().adapter instanceof PostgresAdapter);
  let create = db.schema.createTable('event_queue').addColumn('event_id', 'text', (c) => c.primaryKey());
  // On SQLite the table is its primary key (no separate rowid tree to write as well).
  if (sqlite) create = create.modifyEnd(sql`without rowid`);
  await create.execute();
  await sql`insert into event_queue (event_id) select id from events where dispatched_at is null`.execute(db);
  await db.schema.dropIndex('events_pending_dispatch').execute();
  await db.schema.alterTable('events').dropColumn('dispatched_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('dispatched_at', 'bigint').execute();
  // Events fanned out before this migration is undone lose their time; they are marked fanned out at 0.
  await sql`update events set dispatched_at = 0 where id not in (select event_id from event_queue)`.execute(db);
  await db.schema.createIndex('events_pending_dispatch').on('events').columns(['dispatched_at', 'id']).execute();
  await db.schema.dropTable('event_queue').execute();
}


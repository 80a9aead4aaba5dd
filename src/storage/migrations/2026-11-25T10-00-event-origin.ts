import type { Kysely } from 'kysely';

// Frozen in time: the API request an event came from (its request ids and trace context, as JSON),
// which every webhook delivery of the event carries. Null for the events of before, and for those no
// request caused.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('origin', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('origin').execute();
}

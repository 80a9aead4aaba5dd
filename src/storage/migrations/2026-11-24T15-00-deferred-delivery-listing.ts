import { sql, type Kysely } from 'kysely';

// A client's deliveries were listed through webhook_deliveries_client_id (client_id, id), which the
// delivery worker appended to with every delivery it created: one index page per client with
// deliveries in the commit, written again at every commit. Under the webhook benchmark's load (16
// clients, SQLite) that index was 26 of the 47 pages each of the worker's commits wrote to the WAL.
//
// A delivery now enters the client index when it is marked `listed`. Every delivery is created
// listed, except those the delivery worker creates on SQLite: it marks them in batches (a thousand
// at a time, and whatever is left when it goes idle), so that a client's page of the index is written
// once for many deliveries rather than once a commit. Until then a delivery is in a small partial
// index of its own, by id, which a listing reads beside the client's index: a listing sees every
// delivery, marked or not, in the same order as before.
//
// Queries repeat each partial index's condition word for word: SQLite uses a partial index only then.
const LISTED = sql.raw<boolean>('listed = 1');
const UNLISTED = sql.raw<boolean>('listed = 0');

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.dropIndex('webhook_deliveries_client_id').execute();
  await db.schema.createIndex('webhook_deliveries_client').on('webhook_deliveries').columns(['client_id', 'id']).where(LISTED).execute();
  await db.schema.createIndex('webhook_deliveries_unlisted').on('webhook_deliveries').columns(['id', 'client_id']).where(UNLISTED).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_unlisted').execute();
  await db.schema.dropIndex('webhook_deliveries_client').execute();
  await db.schema.createIndex('webhook_deliveries_client_id').on('webhook_deliveries').columns(['client_id', 'id']).execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('listed').execute();
}

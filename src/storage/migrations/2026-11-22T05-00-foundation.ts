import type { Kysely } from 'kysely';

// Frozen in time: this migration describes the schema as it was when written and imports nothing
// from the application. Times are epoch milliseconds (bigint), JSON is stored as text, booleans as
// 0/1, so one migration serves SQLite and PostgreSQL alike.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('partners')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('jurisdiction', 'text', (c) => c.notNull())
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('approved_since', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('partners_jurisdiction_id').on('partners').columns(['jurisdiction', 'id']).execute();

  await db.schema
    .createTable('instruments')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('class', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('reference_price_cents', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('subject_ref', 'text')
    .addColumn('dispatched_at', 'bigint')
    .execute();
  await db.schema.createIndex('events_client_id').on('events').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('events_pending_dispatch').on('events').columns(['dispatched_at', 'id']).execute();
  await db.schema.createIndex('events_subject_ref').on('events').columns(['subject_ref', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('instruments').execute();
  await db.schema.dropTable('partners').execute();
}

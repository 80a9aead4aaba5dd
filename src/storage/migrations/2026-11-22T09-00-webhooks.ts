import type { Kysely } from 'kysely';

// Frozen in time: webhook endpoints, the stored body of each event's deliveries, the deliveries
// (one per event and endpoint) and their attempts. Times are epoch milliseconds (bigint), booleans 0/1.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('disabled', 'integer', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_endpoints_client_id').on('webhook_endpoints').columns(['client_id', 'id']).execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('first_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_event_endpoint', ['event_id', 'endpoint_id'])
    .execute();
  // The workers' queue: pending deliveries by due time.
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_client_id').on('webhook_deliveries').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'status', 'id']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_messages').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}

import type { Kysely } from 'kysely';

// Frozen in time: orders, the execution reports applied to them, the routers' read positions, and the
// sandbox partners' journal. Cents and quantities are bigint; sums that can exceed 2^63 (a fill
// notional: quantity times price) are decimal text.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('orders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('kyc_attestation_id', 'text', (c) => c.notNull())
    .addColumn('kyc_attestation_sha256', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('kyc_level', 'text', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('qty', 'bigint', (c) => c.notNull())
    .addColumn('limit_price_cents', 'bigint')
    .addColumn('reference_price_cents', 'bigint', (c) => c.notNull())
    .addColumn('filled_qty', 'bigint', (c) => c.notNull())
    .addColumn('fill_notional_cents', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('client_metadata', 'text')
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('last_report_seq', 'integer', (c) => c.notNull())
    .addColumn('route_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_route_at', 'bigint')
    .addColumn('route_lease_until', 'bigint')
    .addColumn('cancel_requested_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('orders_client_id').on('orders').columns(['client_id', 'id']).execute();
  // The monthly cap reads one subject's orders of one month.
  await db.schema.createIndex('orders_client_subject_created').on('orders').columns(['client_id', 'subject_id', 'created_at']).execute();
  // The router's queue: orders waiting for a hand-over or a cancel.
  await db.schema.createIndex('orders_next_route').on('orders').columns(['next_route_at']).execute();
  // Open orders per partner: which connectors' report logs the router reads.
  await db.schema.createIndex('orders_status_partner').on('orders').columns(['status', 'rcpt_to']).execute();
  await db.schema.createIndex('orders_created_at').on('orders').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('order_fills')
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull().unique())
    .addColumn('fill_qty', 'bigint', (c) => c.notNull())
    .addColumn('fill_price_cents', 'bigint', (c) => c.notNull())
    .addColumn('exchange_ref', 'text', (c) => c.notNull())
    .addColumn('executed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_fills_pk', ['order_id', 'seq'])
    .execute();

  await db.schema
    .createTable('connector_positions')
    .addColumn('connector', 'text', (c) => c.primaryKey())
    .addColumn('position', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sandbox_journal')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sandbox_journal_connector').on('sandbox_journal').columns(['connector', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['sandbox_journal', 'connector_positions', 'order_fills', 'orders']) await db.schema.dropTable(table).execute();
}

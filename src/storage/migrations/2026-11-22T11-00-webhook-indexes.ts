import type { Kysely } from 'kysely';

// Indexes for the delivery worker's claim, which runs every time slots free up:
// - the due scan orders by (next_attempt_at, id); with (status, next_attempt_at) alone SQLite sorted
//   every delivery sharing a next_attempt_at (a fanned-out backlog shares one) before its LIMIT;
// - the deliveries under lease, counted per endpoint (leasedPerEndpoint), read every pending delivery
//   of the backlog without an index on lease_until.
// Measured with 20,000 pending deliveries, these two queries were the largest share of the worker's time.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_leased').on('webhook_deliveries').columns(['status', 'lease_until']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_leased').execute();
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
}

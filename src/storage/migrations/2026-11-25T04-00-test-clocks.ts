import { sql, type Kysely } from 'kysely';

// Frozen in time: test clocks of sandbox clients, and the clock an order lives on.
//
// A clock is never removed: a deleted one keeps its time for the orders placed on it, which stay
// where it left them. `orders.test_clock_id` is null for every order placed without a clock, and
// for all orders of before this migration; its index holds only the orders on a clock.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('test_clocks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('frozen_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('test_clocks_by_client').on('test_clocks').columns(['client_id', 'id']).execute();
  await db.schema.alterTable('orders').addColumn('test_clock_id', 'text').execute();
  await db.schema.createIndex('orders_by_test_clock').on('orders').columns(['test_clock_id', 'status']).where(sql.raw<boolean>('test_clock_id is not null')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_by_test_clock').execute();
  await db.schema.alterTable('orders').dropColumn('test_clock_id').execute();
  await db.schema.dropTable('test_clocks').execute();
}

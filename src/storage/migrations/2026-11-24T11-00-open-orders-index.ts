import { sql, type Kysely } from 'kysely';

// The router reads which partners have orders open at the partner (routed or partially filled), to
// know whose execution reports to read. The index it used, (status, rcpt_to), held every order ever
// placed, and each change of status moved the order's entry: two moves per order on its way to
// filled, in pages each commit wrote. A partial index holds only the open orders, with what the
// query selects: an order enters it when routed and leaves it when filled, failed or cancelled, and
// the index stays as small as the set of open orders. Measured on the order-submission benchmark
// (SQLite, from the WAL's frames): this index's pages written per commit of about 11 orders went from
// 3.2 to 2.3, the pages written per order from 5.53 to 5.44-5.49.
const OPEN = sql.raw<boolean>("status in ('routed', 'partially_filled')");

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_status_partner').execute();
  await db.schema.createIndex('orders_open_partner').on('orders').columns(['rcpt_to', 'connector']).where(OPEN).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_open_partner').execute();
  await db.schema.createIndex('orders_status_partner').on('orders').columns(['status', 'rcpt_to']).execute();
}

import { sql, type Kysely } from 'kysely';

// GET /v1/orders filters a client's orders; each filter without an index of its own read the client's
// orders newest first until a page was full, so a rare value (a status few orders have, one
// investor's attestation) read every order the client ever placed, on the event loop (SQLite). Two
// indexes serve the selective filters:
// - orders_client_subject (client_id, subject_id, id) replaces (client_id, subject_id, created_at):
//   the monthly cap's query reads it by id range (ids sort by creation time), and a listing filtered
//   by attestation reads its subject's orders in id order, the listing's order.
// - orders_client_status (client_id, status, id), partial, without the filled orders: an order is
//   in it while open and stays in it when it fails or is cancelled, so a listing by any status but
//   `filled` (most orders, which the client index finds at once) reads only matching orders. Queries
//   repeat the condition word for word: SQLite uses a partial index only then.
const NOT_FILLED = sql.raw<boolean>("status <> 'filled'");

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_client_subject_created').execute();
  await db.schema.createIndex('orders_client_subject').on('orders').columns(['client_id', 'subject_id', 'id']).execute();
  await db.schema.createIndex('orders_client_status').on('orders').columns(['client_id', 'status', 'id']).where(NOT_FILLED).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_client_status').execute();
  await db.schema.dropIndex('orders_client_subject').execute();
  await db.schema.createIndex('orders_client_subject_created').on('orders').columns(['client_id', 'subject_id', 'created_at']).execute();
}

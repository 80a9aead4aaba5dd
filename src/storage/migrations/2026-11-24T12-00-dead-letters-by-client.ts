import { sql, type Kysely } from 'kysely';

// The dead letters of a client, newest first (GET /v1/webhooks/deliveries?status=dead, the dashboard's
// dead-letter list): without this index the listing walked the client's index of every delivery and
// skipped the live ones, so a page cost as much as the client's whole history of deliveries. Dead
// letters are few, and a delivery enters this index only when it dies and leaves it when replayed, so
// it costs the delivery worker nothing in the common case.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_dead_client')
    .on('webhook_deliveries')
    .columns(['client_id', 'id'])
    .where(sql.raw<boolean>("status = 'dead'"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_dead_client').execute();
}

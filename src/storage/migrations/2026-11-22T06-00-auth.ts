import type { Kysely } from 'kysely';

// Frozen in time: clients and their secrets, signing keys, idempotency records.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .execute();

  await db.schema
    .createTable('client_secrets')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('client_secrets_client').on('client_secrets').columns(['client_id', 'created_at']).execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('valid_from', 'bigint', (c) => c.notNull())
    .addColumn('valid_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signing_keys_purpose').on('signing_keys').columns(['purpose', 'valid_from']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'bigint', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['client_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('signing_keys').execute();
  await db.schema.dropTable('client_secrets').execute();
  await db.schema.dropTable('clients').execute();
}

import type { Kysely } from 'kysely';

// Frozen in time: attestations with their revocation state. The revocation list is derived from the
// revoked rows, numbered by crl_number (1, 2, 3, ... in revocation order).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('attestations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('jurisdictions', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('document_sha256', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('revocation_reason', 'text')
    .addColumn('crl_number', 'integer', (c) => c.unique())
    .execute();
  await db.schema.createIndex('attestations_client').on('attestations').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('attestations_subject').on('attestations').columns(['client_id', 'subject_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('attestations').execute();
}

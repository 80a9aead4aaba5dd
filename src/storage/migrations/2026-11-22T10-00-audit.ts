import { PostgresAdapter, type Kysely } from 'kysely';

// Frozen in time: the daily audit snapshots and the leaf hashes their proofs are cut from. Leaf
// hashes are stored in chunks (one row per aligned run of leaves, the hashes concatenated), so a
// day of a million orders is about a thousand rows of 32 KiB rather than a million rows.
export async function up(db: Kysely<any>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';

  await db.schema
    .createTable('audit_snapshots')
    // The UTC day, YYYY-MM-DD: the primary key is what makes one snapshot per day across processes.
    .addColumn('date', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('merkle_root', 'text')
    .addColumn('count', 'bigint')
    .addColumn('previous_merkle_root', 'text')
    .addColumn('chunk_size', 'integer')
    .addColumn('chunk_roots', binary)
    .addColumn('built_at', 'bigint')
    .addColumn('anchor_chain', 'text')
    .addColumn('anchor_tx_hash', 'text')
    .addColumn('anchor_block_height', 'bigint')
    .addColumn('anchor_attempts', 'integer', (c) => c.notNull())
    .addColumn('anchor_error', 'text')
    .addColumn('next_anchor_at', 'bigint')
    .addColumn('anchored_at', 'bigint')
    .addColumn('key_id', 'text')
    .addColumn('signature', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The anchoring queue: built snapshots not yet anchored.
  await db.schema.createIndex('audit_snapshots_next_anchor').on('audit_snapshots').columns(['next_anchor_at']).execute();

  await db.schema
    .createTable('audit_chunks')
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('chunk_index', 'integer', (c) => c.notNull())
    .addColumn('first_order_id', 'text', (c) => c.notNull())
    .addColumn('leaf_hashes', binary, (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_chunks_pk', ['date', 'chunk_index'])
    .execute();
  // A proof finds the chunk holding an order: the last chunk starting at or before its id.
  await db.schema.createIndex('audit_chunks_first_order').on('audit_chunks').columns(['date', 'first_order_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['audit_chunks', 'audit_snapshots']) await db.schema.dropTable(table).execute();
}

import type { Kysely } from 'kysely';

// Frozen in time: fee schedules, and the amounts each fill was charged.
// - fee_schedules holds one row per version: a partner's (scope `partner`, owner its id, from the
//   partner import file) or an exchange's (scope `exchange`, owner its code, shipped or imported),
//   applying from `effective_from` (a trade date). `content` is the version as its file stated it
//   (JSON); `origin` tells the shipped versions (a newer release may update them) from the imported.
// - order_fills gains the amounts fixed when the fill was applied: gross and net as decimal text
//   (they can exceed 2^63), the fees as JSON `[{ type, amount_cents }]` (amounts as decimal text),
//   and the schedule versions used as JSON. All null for the fills of before this migration, which
//   were charged no fees.
// SQLite adds one column per ALTER TABLE.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('fee_schedules')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('effective_from', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fee_schedules_pk', ['scope', 'owner', 'effective_from'])
    .execute();
  for (const column of ['gross_cents', 'fees', 'net_cents', 'fee_schedules']) await db.schema.alterTable('order_fills').addColumn(column, 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['fee_schedules', 'net_cents', 'fees', 'gross_cents']) await db.schema.alterTable('order_fills').dropColumn(column).execute();
  await db.schema.dropTable('fee_schedules').execute();
}

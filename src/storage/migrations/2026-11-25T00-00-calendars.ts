import type { Kysely } from 'kysely';

// Frozen in time: the exchanges' trading calendars, one row for each exchange and year, replaced
// whole by an import. The named timetables, the weekly pattern and the year's exceptional days are
// JSON text; `origin` tells the calendars shipped with the service (which a newer release may
// update) from those an operator imported (which only another import changes).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('market_calendars')
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('year', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('timetables', 'text', (c) => c.notNull())
    .addColumn('week', 'text', (c) => c.notNull())
    .addColumn('days', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('market_calendars_pk', ['exchange', 'year'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('market_calendars').execute();
}

import { sql, type Kysely } from 'kysely';

// Frozen in time: the trading rules of each instrument, and the daily reference rates that convert
// cedi amounts to FCFA for the monthly caps.
// - instruments gain `isin` (null: unknown), `lot_size` and `tick_size_cents` (1: any whole quantity
//   and any price in cents, which is what every order met before) and `price_band_bps`: 750 (+-7.5 %)
//   on the BRVM, 1000 on the BVMAC and the GSE, none for funds and money-market bills, whose prices
//   are a net asset value or an auction's.
// - fx_rates holds one rate per currency and UTC day, as the decimal text imported (exact).
// SQLite adds one column per ALTER TABLE.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('instruments').addColumn('isin', 'text').execute();
  await db.schema.alterTable('instruments').addColumn('lot_size', 'bigint', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('instruments').addColumn('tick_size_cents', 'bigint', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('instruments').addColumn('price_band_bps', 'integer').execute();
  await sql`update instruments
            set price_band_bps = case exchange when 'BRVM' then 750 else 1000 end
            where class not in ('opcvm', 'money_market')`.execute(db);

  await db.schema
    .createTable('fx_rates')
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fx_rates_pk', ['currency', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('fx_rates').execute();
  for (const column of ['price_band_bps', 'tick_size_cents', 'lot_size', 'isin']) await db.schema.alterTable('instruments').dropColumn(column).execute();
}

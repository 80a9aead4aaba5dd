import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { FxRateRow } from './instrument.table.js';

export async function findFxRate(db: Kysely<Database>, currency: string, day: string): Promise<FxRateRow | undefined> {
  return db.selectFrom('fx_rates').selectAll().where('currency', '=', currency).where('day', '=', day).executeTakeFirst();
}

/** Rates of the days from `fromDay` on (YYYY-MM-DD sorts as the days do; every day without it), oldest first. */
export async function listFxRates(db: Kysely<Database>, fromDay?: string): Promise<FxRateRow[]> {
  const query = db.selectFrom('fx_rates').selectAll();
  return (fromDay === undefined ? query : query.where('day', '>=', fromDay)).orderBy('day').orderBy('currency').execute();
}

export async function upsertFxRate(db: Kysely<Database>, row: FxRateRow): Promise<void> {
  const { currency: _currency, day: _day, created_at: _created, ...changes } = row;
  await db
    .insertInto('fx_rates')
    .values(row)
    .onConflict((oc) => oc.columns(['currency', 'day']).doUpdateSet(changes))
    .execute();
}

import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { MarketCalendarRow } from './calendar.table.js';

export async function listCalendarRows(db: Kysely<Database>): Promise<MarketCalendarRow[]> {
  return db.selectFrom('market_calendars').selectAll().orderBy('exchange').orderBy('year').execute();
}

export async function findCalendarRow(db: Kysely<Database>, exchange: string, year: number): Promise<MarketCalendarRow | undefined> {
  return db.selectFrom('market_calendars').selectAll().where('exchange', '=', exchange).where('year', '=', year).executeTakeFirst();
}

/** Writes an exchange's year, replacing what was there. */
export async function upsertCalendarRow(db: Kysely<Database>, row: MarketCalendarRow): Promise<void> {
  const { exchange: _exchange, year: _year, ...changes } = row;
  await db
    .insertInto('market_calendars')
    .values(row)
    .onConflict((oc) => oc.columns(['exchange', 'year']).doUpdateSet(changes))
    .execute();
}

/** Writes a shipped year where the database has none (processes starting together may race to it). */
export async function insertCalendarRowIfAbsent(db: Kysely<Database>, row: MarketCalendarRow): Promise<void> {
  await db
    .insertInto('market_calendars')
    .values(row)
    .onConflict((oc) => oc.columns(['exchange', 'year']).doNothing())
    .execute();
}

/** Replaces a year that came from shipped data; a year an operator imported is left alone. */
export async function replaceShippedCalendarRow(db: Kysely<Database>, row: MarketCalendarRow): Promise<void> {
  const { exchange, year, ...changes } = row;
  await db
    .updateTable('market_calendars')
    .set(changes)
    .where('exchange', '=', exchange)
    .where('year', '=', year)
    .where('origin', '=', 'shipped')
    .execute();
}

import type { Kysely } from 'kysely';
import type { ErrorDetail } from '../lib/errors.js';
import { runImport, type ImportReport } from '../partners/import.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { MarketCalendar, type CalendarYear, type ExchangeCode } from './calendar.js';
import { calendarYears, validateCalendarEntry, type CalendarEntry } from './calendar-file.js';
import {
  findCalendarRow,
  insertCalendarRowIfAbsent,
  listCalendarRows,
  replaceShippedCalendarRow,
  upsertCalendarRow,
} from './calendar.repository.js';
import type { CalendarOrigin, MarketCalendarRow } from './calendar.table.js';
import { readShippedCalendars } from './shipped-calendars.js';

export type { ImportReport } from '../partners/import.js';

export function toCalendarYear(row: MarketCalendarRow): CalendarYear {
  return {
    exchange: row.exchange as ExchangeCode,
    year: row.year,
    source: row.source,
    timetables: JSON.parse(row.timetables) as CalendarYear['timetables'],
    week: JSON.parse(row.week) as CalendarYear['week'],
    days: JSON.parse(row.days) as CalendarYear['days'],
  };
}

function toRow(year: CalendarYear, origin: CalendarOrigin, now: number): MarketCalendarRow {
  return {
    exchange: year.exchange,
    year: year.year,
    source: year.source,
    timetables: JSON.stringify(year.timetables),
    week: JSON.stringify(year.week),
    days: JSON.stringify(year.days),
    origin,
    updated_at: now,
  };
}

/** The calendar of every exchange, as the database holds it now. */
export async function loadMarketCalendar(db: Kysely<Database>): Promise<MarketCalendar> {
  return new MarketCalendar((await listCalendarRows(db)).map(toCalendarYear));
}

/**
 * Imports calendar entries (one object, or an array of them): each replaces the years it lists of its
 * exchange. All or nothing: one invalid entry, or one exchange and year given twice, and nothing is
 * written; the report names each refused entry by its index and each problem by its member path.
 * Run it in a transaction.
 */
export async function importCalendars(trx: Kysely<Database>, input: unknown, options: { now: Date }): Promise<ImportReport> {
  const entries = Array.isArray(input) || typeof input !== 'object' || input === null ? input : [input];
  const seen = new Map<string, number>();
  return runImport<CalendarEntry, CalendarYear[]>(
    entries,
    'calendar entries (or one entry)',
    {},
    (value) => {
      const details = validateCalendarEntry(value);
      return details.length === 0 ? null : details;
    },
    async (entry, index) => {
      const details: ErrorDetail[] = [];
      for (const [i, year] of entry.years.entries()) {
        const key = `${entry.exchange} ${year}`;
        const earlier = seen.get(key);
        if (earlier !== undefined)
          details.push({ field: `years.${i}`, rule: 'unique', value: year, message: `${key} is also in entry ${earlier}` });
        else seen.set(key, index);
      }
      if (details.length > 0) return { details };
      const existing = await Promise.all(entry.years.map((year) => findCalendarRow(trx, entry.exchange, year)));
      return {
        id: `${entry.exchange} ${[...entry.years].sort((a, b) => a - b).join(', ')}`,
        action: existing.some((row) => row !== undefined) ? 'updated' : 'created',
        row: calendarYears(entry),
      };
    },
    async (years) => {
      for (const year of years) await upsertCalendarRow(trx, toRow(year, 'import', options.now.getTime()));
    },
  );
}

function sameContent(a: MarketCalendarRow, b: MarketCalendarRow): boolean {
  return a.source === b.source && a.timetables === b.timetables && a.week === b.week && a.days === b.days;
}

/**
 * Writes the shipped calendars (calendars/ at the repository's root) where the database lacks them,
 * in every mode, so that a fresh deployment knows its exchanges' holidays. A year that came from an
 * earlier release's files is brought up to date; a year an operator imported is never touched.
 * Returns the `EXCHANGE YEAR` written.
 */
export async function applyShippedCalendars(
  db: Kysely<Database>,
  dialect: DialectName,
  now: Date,
  files = readShippedCalendars(),
): Promise<string[]> {
  const years: CalendarYear[] = [];
  for (const { file, content } of files) {
    const details = validateCalendarEntry(content);
    if (details.length > 0) throw new Error(`shipped calendar ${file} is invalid: ${JSON.stringify(details)}`);
    years.push(...calendarYears(content as CalendarEntry));
  }
  const pending = async (reader: Kysely<Database>): Promise<{ row: MarketCalendarRow; existing: MarketCalendarRow | undefined }[]> => {
    const stored = new Map((await listCalendarRows(reader)).map((r) => [`${r.exchange} ${r.year}`, r]));
    return years
      .map((year) => ({ row: toRow(year, 'shipped', now.getTime()), existing: stored.get(`${year.exchange} ${year.year}`) }))
      .filter(({ row, existing }) => existing === undefined || (existing.origin === 'shipped' && !sameContent(existing, row)));
  };
  // Nearly always there is nothing to write; the write transaction (which takes the write lock before
  // reading, so that processes starting together on one SQLite file wait for each other) is opened
  // only when there is.
  if ((await pending(db)).length === 0) return [];
  return db.transaction().execute(async (trx) => {
    // Processes starting together on one PostgreSQL database would each find the same years missing.
    await lockForTransaction(trx, dialect, 'seed:shipped-calendars');
    const writes = await pending(trx);
    for (const { row, existing } of writes) {
      if (existing === undefined) await insertCalendarRowIfAbsent(trx, row);
      else await replaceShippedCalendarRow(trx, row);
    }
    return writes.map(({ row }) => `${row.exchange} ${row.year}`);
  });
}

import type { Command } from 'commander';
import { openDatabase } from '../context.js';
import { loadConfig } from '../../config/config.js';
import { isoSeconds } from '../../lib/clock.js';
import type { Exchange } from '../../markets/exchanges.js';
import { EXCHANGES, isExchange } from '../../markets/exchanges.js';
import { listCalendarRows } from '../../markets/calendar.repository.js';
import { importCalendars, loadMarketCalendar, toCalendarYear } from '../../markets/calendar.service.js';
import { exchangeClock } from '../../markets/market.service.js';
import type { Storage } from '../../storage/database.js';
import { printEntryImport } from '../import-report.js';
import { readJsonFile } from '../json-file.js';
import { cliLanguage, say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

/** The day of the week of a calendar day, short, in the run's language (`Mon`, `lun.`). */
function weekday(date: string): string {
  return new Intl.DateTimeFormat(cliLanguage(), { weekday: 'short', timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`));
}

async function withDatabase<T>(run: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openDatabase(loadConfig());
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

function exchangeArgument(value: string): Exchange {
  const code = value.toUpperCase();
  if (!isExchange(code)) throw new CliError({ key: 'markets.exchange', params: { value, exchanges: EXCHANGES.join(', ') } });
  return code;
}

export function registerMarkets(program: Command): void {
  const calendars = program
    .command('calendars')
    .description("Manage the exchanges' trading calendars (holidays, shortened days, timetables)");
  calendars
    .command('import <file>')
    .description('Replace the years of the exchange calendars the file gives (one entry or a JSON array of entries); all or nothing')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const input = readJsonFile(file);
      await withDatabase(async (storage) => {
        const report = await storage.transact((trx) => importCalendars(trx, input, { now: new Date() }));
        // Reading the calendars back checks they build, as every process will build them.
        if (report.committed) await loadMarketCalendar(storage.db);
        printEntryImport(report, options.json === true, 'calendars.done');
      });
    });

  calendars
    .command('list')
    .description('The years each exchange calendar covers, where each comes from, and its exceptional days')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = await withDatabase(async (storage) => listCalendarRows(storage.db));
      const out = rows.map((row) => {
        const year = toCalendarYear(row);
        return {
          exchange: year.exchange,
          year: year.year,
          origin: row.origin,
          holidays: year.days.filter((d) => d.timetable === null).length,
          special_timetables: year.days.filter((d) => d.timetable !== null).length,
          provisional: year.days.filter((d) => d.provisional === true).length,
          updated_at: isoSeconds(row.updated_at),
          source: year.source,
        };
      });
      if (options.json === true) printJson(out);
      else printTable(out, ['exchange', 'year', 'origin', 'holidays', 'special_timetables', 'provisional', 'updated_at']);
    });

  calendars
    .command('show <exchange>')
    .description("An exchange's exceptional days (holidays, other timetables), provisional dates marked")
    .option('--year <year>', 'only this year')
    .option('--json', 'print as JSON')
    .action(async (exchangeArg: string, options: { year?: string; json?: boolean }) => {
      const exchange = exchangeArgument(exchangeArg);
      const rows = await withDatabase(async (storage) => listCalendarRows(storage.db));
      const years = rows
        .map(toCalendarYear)
        .filter((y) => y.exchange === exchange && (options.year === undefined || String(y.year) === options.year));
      if (years.length === 0)
        throw new CliError(
          options.year === undefined
            ? { key: 'calendars.none', params: { exchange } }
            : { key: 'calendars.none.year', params: { exchange, year: options.year } },
        );
      if (options.json === true) {
        printJson(years);
        return;
      }
      for (const year of years) {
        process.stdout.write(`${say('calendars.year', { exchange, year: String(year.year), source: year.source })}\n\n`);
        const days = year.days.map((d) => ({
          date: d.date,
          day: weekday(d.date),
          timetable: d.timetable ?? say('calendars.closed'),
          provisional: d.provisional === true ? say('calendars.provisional') : '',
          name: d.name,
        }));
        printTable(days, ['date', 'day', 'timetable', 'provisional', 'name']);
        process.stdout.write('\n');
      }
    });

  const markets = program.command('markets').description('The exchanges and their trading clocks');
  markets
    .command('clock [exchange]')
    .description('The phase of one exchange (or of every one) now, whether it is open, and its next open and close')
    .option('--json', 'print as JSON (an object for one exchange, an array for all)')
    .action(async (exchangeArg: string | undefined, options: { json?: boolean }) => {
      const only = exchangeArg === undefined ? null : exchangeArgument(exchangeArg);
      const calendar = await withDatabase(async (storage) => loadMarketCalendar(storage.db));
      const now = Date.now();
      const clocks = (only === null ? EXCHANGES : [only]).map((exchange) => exchangeClock(calendar, exchange, now));
      if (options.json === true) printJson(only === null ? clocks : clocks[0]);
      else printTable(clocks, ['exchange', 'phase', 'is_open', 'next_open', 'next_close']);
    });
}

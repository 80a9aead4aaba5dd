import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { openDatabase } from '../context.js';
import { listInstruments } from '../../partners/instrument.repository.js';
import { importInstruments, toInstrument } from '../../partners/instrument.service.js';
import { listFxRates } from '../../partners/fx-rate.repository.js';
import { importFxRates } from '../../partners/fx-rate.service.js';
import { listPartners } from '../../partners/partner.repository.js';
import { importPartners, type ImportReport } from '../../partners/partner.service.js';
import { isCalendarDate } from '../../lib/dates.js';
import { readJsonFile } from '../json-file.js';
import { say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';
import { registerFixCommands } from './fix.js';
import { accountRuleOf } from '../../partners/core/account-rule.js';
import { parsePartnerChecks } from '../../partners/core/checks.js';
import { parseFixSettings } from '../../partners/fix-settings.js';

function printReport(report: ImportReport, json: boolean, refreshSeconds: number): void {
  if (json) {
    printJson(report);
  } else {
    for (const a of report.applied)
      process.stdout.write(`${say('import.row.applied', { index: String(a.index), action: a.action, id: a.id })}\n`);
    for (const r of report.rejected) {
      // Index -1: the file itself is not an array of rows (runImport), so no row and no --allow-partial.
      if (r.index === -1) {
        process.stdout.write(`${say('import.file.rejected')}\n`);
        continue;
      }
      for (const d of r.details) {
        const params = { index: String(r.index), field: d.field, rule: d.rule };
        process.stdout.write(
          `${d.message === undefined ? say('import.row.rejected', params) : say('import.row.rejectedWhy', { ...params, message: String(d.message) })}\n`,
        );
      }
    }
    if (!report.committed && !report.rejected.some((r) => r.index === -1)) process.stdout.write(`${say('import.row.nothing')}\n`);
    else if (report.applied.length > 0) process.stdout.write(`${say('import.row.refresh', { seconds: String(refreshSeconds) })}\n`);
  }
  if (report.rejected.length > 0) process.exitCode = 1;
}

type ImportFn = (
  trx: Parameters<typeof importPartners>[0],
  input: unknown,
  options: { now: Date; allowPartial?: boolean; fixPlaintextAllowed?: boolean },
) => Promise<ImportReport>;

function registerImport(parent: Command, what: string, run: ImportFn): void {
  parent
    .command('import <file>')
    .description(`Insert or update ${what} from a JSON array; all-or-nothing unless --allow-partial`)
    .option('--allow-partial', 'write the valid rows even when others are rejected')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { allowPartial?: boolean; json?: boolean }) => {
      const input = readJsonFile(file);
      const config = loadConfig();
      const storage = await openDatabase(config);
      try {
        const now = new Date();
        const report = await storage.transact((trx) =>
          run(trx, input, { now, allowPartial: options.allowPartial === true, fixPlaintextAllowed: config.fixPlaintextAllowed }),
        );
        printReport(report, options.json === true, config.referenceRefreshSeconds);
      } finally {
        await storage.close();
      }
    });
}

export function registerDirectory(program: Command): void {
  const partners = program.command('partners').description('Manage the SGI partner directory');
  registerImport(partners, 'SGI partners', importPartners);
  registerFixCommands(partners);
  partners
    .command('list')
    .description('List every partner, approved or not')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const storage = await openDatabase(loadConfig());
      try {
        const rows = await listPartners(storage.db, { afterId: null, limit: 100_000, approvedOnly: false });
        const out = rows.map((r) => {
          const checks = parsePartnerChecks(r.checks);
          const account = accountRuleOf({
            checks,
            defaultAccount: r.fix === null ? null : parseFixSettings(r.fix).account,
          });
          return {
            id: r.id,
            name: r.name,
            jurisdiction: r.jurisdiction,
            capabilities: JSON.parse(r.capabilities) as string[],
            status: r.status,
            approved_since: r.approved_since,
            connector: r.connector,
            checks,
            // Whether orders need the investor's account, and the default that stands in for it.
            requires_account: account.required,
            default_account: account.fallback,
          };
        });
        if (options.json === true) printJson(out);
        else printTable(out, ['id', 'name', 'jurisdiction', 'status', 'capabilities', 'connector', 'requires_account', 'default_account']);
      } finally {
        await storage.close();
      }
    });

  const instruments = program.command('instruments').description('Manage the instrument catalogue');
  registerImport(instruments, 'instruments', importInstruments);
  instruments
    .command('list')
    .description('List every instrument')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const storage = await openDatabase(loadConfig());
      try {
        const rows = (await listInstruments(storage.db, { afterCode: null, limit: 100_000 })).map(toInstrument);
        if (options.json === true) printJson(rows);
        else
          printTable(rows, [
            'code',
            'exchange',
            'class',
            'status',
            'currency',
            'reference_price_cents',
            'tick_size_cents',
            'lot_size',
            'price_band_bps',
            'name',
          ]);
      } finally {
        await storage.close();
      }
    });

  const fx = program.command('fx').description('Manage the daily reference rates that count cedi amounts in FCFA for the monthly caps');
  registerImport(fx, 'reference rates (date, currency, rate in FCFA per unit, source)', importFxRates);
  fx.command('list')
    .description('List the reference rates from a date on')
    .option('--from <date>', 'first day, YYYY-MM-DD', '2000-01-01')
    .option('--json', 'print as JSON')
    .action(async (options: { from: string; json?: boolean }) => {
      if (!isCalendarDate(options.from)) throw new CliError({ key: 'directory.from', params: { value: options.from } });
      const storage = await openDatabase(loadConfig());
      try {
        const rows = (await listFxRates(storage.db, options.from)).map((r) => ({
          date: r.day,
          currency: r.currency,
          rate: r.rate,
          source: r.source,
        }));
        if (options.json === true) printJson(rows);
        else printTable(rows, ['date', 'currency', 'rate', 'source']);
      } finally {
        await storage.close();
      }
    });
}

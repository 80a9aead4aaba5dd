import type { Command } from 'commander';
import { openDatabase } from '../context.js';
import { loadConfig } from '../../config/config.js';
import { isoSeconds } from '../../lib/clock.js';
import type { ExchangeFeeVersion, PartnerFeeVersion } from '../../partners/core/fee-schedule.js';
import { listSchedules } from '../../partners/fee-schedule.repository.js';
import { importExchangeFees } from '../../partners/fee-schedule.service.js';
import type { FeeScheduleRow } from '../../partners/fee-schedule.table.js';
import type { Storage } from '../../storage/database.js';
import { printEntryImport } from '../import-report.js';
import { readJsonFile } from '../json-file.js';
import { say } from '../i18n.js';
import { CliError, printJson, printTable } from '../output.js';

async function withDatabase<T>(run: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openDatabase(loadConfig());
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

/** One line per component of a version: what it charges and how it rounds. */
function describe(row: FeeScheduleRow): string[] {
  const rounding = (r: { mode?: string; increment_cents?: number } | undefined) => `${r?.mode ?? 'half_up'}/${r?.increment_cents ?? 1}`;
  if (row.scope === 'partner') {
    const v = JSON.parse(row.content) as PartnerFeeVersion;
    const lines = [
      say('fees.commission', {
        rate: String(v.commission.rate_bps),
        minimum: String(v.commission.minimum_cents),
        rounding: rounding(v.commission.rounding),
      }),
    ];
    for (const [cls, c] of Object.entries(v.by_class ?? {}))
      if (c !== undefined)
        lines.push(
          say('fees.commission.class', {
            class: cls,
            rate: String(c.rate_bps),
            minimum: String(c.minimum_cents),
            rounding: rounding(c.rounding),
          }),
        );
    if (v.tax !== undefined)
      lines.push(
        v.tax === null
          ? say('fees.partnerTax.none')
          : say('fees.partnerTax', { rate: String(v.tax.rate_bps), on: v.tax.on.join(', '), rounding: rounding(v.tax.rounding) }),
      );
    return lines;
  }
  const v = JSON.parse(row.content) as ExchangeFeeVersion;
  const lines = v.components.map((c) => {
    const params = { type: c.type, rate: String(c.rate_bps), rounding: rounding(c.rounding), name: c.name };
    return c.classes === undefined
      ? say('fees.component', params)
      : say('fees.component.classes', { ...params, classes: c.classes.join(', ') });
  });
  lines.push(
    v.tax === null
      ? say('fees.tax.none')
      : say('fees.tax', { rate: String(v.tax.rate_bps), on: v.tax.on.join(', '), rounding: rounding(v.tax.rounding), name: v.tax.name }),
  );
  return lines;
}

export function registerFees(program: Command): void {
  const fees = program
    .command('fees')
    .description("Manage fee schedules: the exchanges' fees and taxes (partners' commissions come with cauri partners import)");
  fees
    .command('import <file>')
    .description(
      'Write the exchange fee schedule versions the file gives (one entry or a JSON array of entries), each by its effective_from; all or nothing',
    )
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const input = readJsonFile(file);
      await withDatabase(async (storage) => {
        const report = await storage.transact((trx) => importExchangeFees(trx, input, { now: new Date() }));
        printEntryImport(report, options.json === true, 'fees.done');
      });
    });

  fees
    .command('list')
    .description("Every stored schedule version, partners' and exchanges', with its effective date and source")
    .option('--scope <scope>', 'only `partner` or `exchange` versions')
    .option('--owner <id>', 'only the versions of this partner id or exchange code')
    .option('--json', 'print as JSON (each version with its content)')
    .action(async (options: { scope?: string; owner?: string; json?: boolean }) => {
      if (options.scope !== undefined && options.scope !== 'partner' && options.scope !== 'exchange')
        throw new CliError({ key: 'fees.scope' });
      const filter = {
        ...(options.scope === undefined ? {} : { scope: options.scope as 'partner' | 'exchange' }),
        ...(options.owner === undefined ? {} : { owner: options.owner.startsWith('sgi_') ? options.owner : options.owner.toUpperCase() }),
      };
      const rows = await withDatabase(async (storage) => listSchedules(storage.db, filter));
      if (options.json === true) {
        printJson(
          rows.map((r) => ({
            scope: r.scope,
            id: r.owner,
            effective_from: r.effective_from,
            origin: r.origin,
            updated_at: isoSeconds(Number(r.updated_at)),
            content: JSON.parse(r.content) as unknown,
          })),
        );
        return;
      }
      printTable(
        rows.flatMap((r) =>
          describe(r).map((charges, i) => ({
            scope: i === 0 ? r.scope : '',
            id: i === 0 ? r.owner : '',
            effective_from: i === 0 ? r.effective_from : '',
            origin: i === 0 ? r.origin : '',
            charges,
          })),
        ),
        ['scope', 'id', 'effective_from', 'origin', 'charges'],
      );
    });
}

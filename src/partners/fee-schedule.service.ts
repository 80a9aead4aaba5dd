import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { ErrorDetail } from '../lib/errors.js';
import { runImport, type ImportReport } from './import.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { ExchangeFeeVersion, PartnerFeeVersion } from './core/fee-schedule.js';
import { exchangeVersionOf, validateExchangeFeeEntry, type ExchangeFeeEntry } from './fee-file.js';
import {
  findScheduleVersion,
  insertScheduleIfAbsent,
  listSchedules,
  replaceShippedSchedule,
  upsertSchedule,
} from './fee-schedule.repository.js';
import type { FeeOrigin, FeeScheduleRow } from './fee-schedule.table.js';

export type { ImportReport } from './import.js';

/**
 * The fee schedules the repository ships, in fees/ at its root (compiled, this module sits in
 * dist/src/post-trade/): one file per exchange, in the format `cauri fees import` reads.
 */
export const SHIPPED_FEES_DIR = fileURLToPath(new URL('../../../fees/', import.meta.url));

export function readShippedFees(dir = SHIPPED_FEES_DIR): { file: string; content: unknown }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({ file, content: JSON.parse(readFileSync(`${dir}${file}`, 'utf8')) as unknown }));
}

function exchangeRow(version: ExchangeFeeVersion, origin: FeeOrigin, now: number): FeeScheduleRow {
  return {
    scope: 'exchange',
    owner: version.exchange,
    effective_from: version.effective_from,
    source: version.source,
    content: JSON.stringify(version),
    origin,
    updated_at: now,
  };
}

/** The rows a partner's valid `fees` member stores, one per version. */
export function partnerFeeRows(partnerId: string, versions: readonly PartnerFeeVersion[], now: number): FeeScheduleRow[] {
  return versions.map((v) => ({
    scope: 'partner',
    owner: partnerId,
    effective_from: v.effective_from,
    source: v.source,
    content: JSON.stringify(v),
    origin: 'import',
    updated_at: now,
  }));
}

const asEntries = (input: unknown): unknown => (Array.isArray(input) || typeof input !== 'object' || input === null ? input : [input]);

/**
 * Imports exchange fee schedule versions (one entry, or an array of them): each writes its exchange's
 * version of its `effective_from`, replacing one of the same date. All or nothing: one invalid
 * entry, or one exchange and date given twice, and nothing is written; the report names each refused
 * entry by its index and each problem by its member path. Run it in a transaction. Fills already
 * applied keep the fees they were charged.
 */
export async function importExchangeFees(trx: Kysely<Database>, input: unknown, options: { now: Date }): Promise<ImportReport> {
  const seen = new Map<string, number>();
  return runImport<ExchangeFeeEntry, FeeScheduleRow>(
    asEntries(input),
    'exchange fee schedule entries (or one entry)',
    {},
    (value) => {
      const details = validateExchangeFeeEntry(value);
      return details.length === 0 ? null : details;
    },
    async (entry, index) => {
      const key = `${entry.exchange} ${entry.effective_from}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        const details: ErrorDetail[] = [
          { field: 'effective_from', rule: 'unique', value: entry.effective_from, message: `${key} is also in entry ${earlier}` },
        ];
        return { details };
      }
      seen.set(key, index);
      const existing = await findScheduleVersion(trx, 'exchange', entry.exchange, entry.effective_from);
      return {
        id: key,
        action: existing === undefined ? 'created' : 'updated',
        row: exchangeRow(exchangeVersionOf(entry), 'import', options.now.getTime()),
      };
    },
    (row) => upsertSchedule(trx, row),
  );
}

/**
 * Writes the shipped exchange schedules (fees/ at the repository's root) where the database lacks
 * them, in every mode. A version that came from an earlier release's files is brought up to date; a
 * version an operator imported is never touched. Returns the `EXCHANGE DATE` written.
 */
export async function applyShippedFees(
  db: Kysely<Database>,
  dialect: DialectName,
  now: Date,
  files = readShippedFees(),
): Promise<string[]> {
  const rows: FeeScheduleRow[] = [];
  for (const { file, content } of files) {
    for (const [i, entry] of (asEntries(content) as unknown[]).entries()) {
      const details = validateExchangeFeeEntry(entry);
      if (details.length > 0) throw new Error(`shipped fee schedule ${file} entry ${i} is invalid: ${JSON.stringify(details)}`);
      rows.push(exchangeRow(exchangeVersionOf(entry as ExchangeFeeEntry), 'shipped', now.getTime()));
    }
  }
  const pending = async (reader: Kysely<Database>) => {
    const stored = new Map((await listSchedules(reader, { scope: 'exchange' })).map((r) => [`${r.owner} ${r.effective_from}`, r]));
    return rows
      .map((row) => ({ row, existing: stored.get(`${row.owner} ${row.effective_from}`) }))
      .filter(
        ({ row, existing }) =>
          existing === undefined || (existing.origin === 'shipped' && (existing.content !== row.content || existing.source !== row.source)),
      );
  };
  if ((await pending(db)).length === 0) return [];
  return db.transaction().execute(async (trx) => {
    // Processes starting together on one PostgreSQL database would each find the same versions missing.
    await lockForTransaction(trx, dialect, 'seed:shipped-fees');
    const writes = await pending(trx);
    for (const { row, existing } of writes) {
      if (existing === undefined) await insertScheduleIfAbsent(trx, row);
      else await replaceShippedSchedule(trx, row);
    }
    return writes.map(({ row }) => `${row.owner} ${row.effective_from}`);
  });
}

import type { Kysely } from 'kysely';
import { compileValidator } from '../lib/validation.js';
import type { Database } from '../storage/schema.js';
import { parseDecimalRate } from './core/decimal-rate.js';
import { findFxRate, upsertFxRate } from './fx-rate.repository.js';
import type { FxRateRow } from './instrument.table.js';
import { FxRateImportRow } from './partner.schemas.js';
import { runImport, type ImportReport } from './import.js';

const validateFxRateRow = compileValidator(FxRateImportRow, 'row');

/**
 * Inserts or updates reference rates, one per currency and day (`GHS:2026-11-25` is the id in the
 * report); the contract of runImport. A day imported again takes the new rate.
 */
export async function importFxRates(
  trx: Kysely<Database>,
  input: unknown,
  options: { now: Date; allowPartial?: boolean },
): Promise<ImportReport> {
  const seen = new Map<string, number>();
  return runImport<FxRateImportRow, FxRateRow>(
    input,
    'reference rates',
    options,
    validateFxRateRow,
    async (row, index) => {
      const id = `${row.currency}:${row.date}`;
      if (seen.has(id))
        return { details: [{ field: 'date', rule: 'unique', value: row.date, message: `same currency and date as row ${seen.get(id)}` }] };
      seen.set(id, index);
      if (parseDecimalRate(row.rate) === null)
        return { details: [{ field: 'rate', rule: 'exclusiveMinimum', value: row.rate, message: 'must be above zero' }] };
      const existing = await findFxRate(trx, row.currency, row.date);
      const now = options.now.getTime();
      return {
        id,
        action: existing === undefined ? 'created' : 'updated',
        row: {
          currency: row.currency,
          day: row.date,
          rate: row.rate,
          source: row.source ?? null,
          created_at: existing?.created_at ?? now,
          updated_at: now,
        },
      };
    },
    (row) => upsertFxRate(trx, row),
  );
}

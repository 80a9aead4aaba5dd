import type { Kysely } from 'kysely';
import { notFound } from '../lib/errors.js';
import { compileValidator } from '../lib/validation.js';
import type { Database } from '../storage/schema.js';
import { findInstrument, listInstruments, upsertInstrument } from './instrument.repository.js';
import type { InstrumentRow } from './instrument.table.js';
import { InstrumentImportRow, type Instrument } from './partner.schemas.js';
import { exchangeOfInstrument, type Capability, type Exchange } from './markets.js';
import { runImport, type ImportReport } from './import.js';
import type { Page } from './partner.service.js';

export function toInstrument(row: InstrumentRow): Instrument {
  return {
    code: row.code,
    exchange: row.exchange as Exchange,
    class: row.class as Capability,
    name: row.name,
    reference_price_cents: row.reference_price_cents,
    status: row.status,
  };
}

export async function listCatalogue(
  db: Kysely<Database>,
  q: { afterCode: string | null; limit: number; exchange?: Exchange; class?: Capability; status?: 'active' | 'suspended' },
): Promise<Page<Instrument>> {
  const rows = await listInstruments(db, q);
  const hasMore = rows.length > q.limit;
  const items = rows.slice(0, q.limit).map(toInstrument);
  return { items, nextAfter: hasMore ? (items[items.length - 1]?.code ?? null) : null };
}

export async function getInstrument(db: Kysely<Database>, code: string): Promise<Instrument> {
  const row = await findInstrument(db, code);
  if (row === undefined) throw notFound('Instrument', code);
  return toInstrument(row);
}

const validateInstrumentRow = compileValidator(InstrumentImportRow, 'row');

/** Inserts or updates instruments, keyed by code (the exchange comes from it); the contract of runImport. */
export async function importInstruments(trx: Kysely<Database>, input: unknown, options: { now: Date; allowPartial?: boolean }): Promise<ImportReport> {
  const codes = new Map<string, number>();
  return runImport<InstrumentImportRow, InstrumentRow>(
    input,
    'instruments',
    options,
    validateInstrumentRow,
    async (row, index) => {
      if (codes.has(row.code)) return { details: [{ field: 'code', rule: 'unique', value: row.code, message: `same code as row ${codes.get(row.code)}` }] };
      codes.set(row.code, index);
      const existing = await findInstrument(trx, row.code);
      return {
        id: row.code,
        action: existing === undefined ? 'created' : 'updated',
        row: {
          code: row.code,
          exchange: exchangeOfInstrument(row.code),
          class: row.class,
          name: row.name,
          reference_price_cents: row.reference_price_cents,
          status: row.status ?? 'active',
          created_at: existing?.created_at ?? options.now.getTime(),
          updated_at: options.now.getTime(),
        },
      };
    },
    (row) => upsertInstrument(trx, row),
  );
}

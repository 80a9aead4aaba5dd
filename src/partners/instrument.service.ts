import type { Kysely } from 'kysely';
import { notFound, type ErrorDetail } from '../lib/errors.js';
import { compileValidator } from '../lib/validation.js';
import type { Database } from '../storage/schema.js';
import { isValidIsin } from './core/isin.js';
import { findInstrument, listInstruments, upsertInstrument } from './instrument.repository.js';
import type { InstrumentRow } from './instrument.table.js';
import { InstrumentImportRow, type Instrument } from './partner.schemas.js';
import {
  CURRENCY_OF_EXCHANGE,
  DEFAULT_LOT_SIZE,
  DEFAULT_TICK_SIZE_CENTS,
  defaultPriceBandBps,
  exchangeOfInstrument,
  INSTRUMENT_CODE_PATTERN,
  type Capability,
  type Exchange,
} from './markets.js';
import { runImport, type ImportReport } from './import.js';
import type { Page } from './partner.service.js';

export function toInstrument(row: InstrumentRow): Instrument {
  const exchange = row.exchange as Exchange;
  return {
    code: row.code,
    exchange,
    class: row.class as Capability,
    name: row.name,
    currency: CURRENCY_OF_EXCHANGE[exchange],
    isin: row.isin,
    lot_size: row.lot_size,
    tick_size_cents: row.tick_size_cents,
    reference_price_cents: row.reference_price_cents,
    price_band_bps: row.price_band_bps,
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

const CODE = new RegExp(INSTRUMENT_CODE_PATTERN);

export async function getInstrument(db: Kysely<Database>, code: string): Promise<Instrument> {
  // A code that cannot be one (any text reaches this route) is not looked up: it is unknown.
  const row = CODE.test(code) ? await findInstrument(db, code) : undefined;
  if (row === undefined) throw notFound('Instrument', code);
  return toInstrument(row);
}

const validateInstrumentRow = compileValidator(InstrumentImportRow, 'row');

/**
 * The stored instrument a valid import row makes, or what is wrong with it beyond its schema: an
 * ISIN whose check digit is wrong, a currency other than the exchange's, a reference price off the
 * tick grid. Members the row leaves out keep `existing`'s values, else take the defaults.
 */
export function instrumentFromImport(
  row: InstrumentImportRow,
  existing: InstrumentRow | undefined,
  nowMs: number,
): { row: InstrumentRow } | { details: ErrorDetail[] } {
  const exchange = exchangeOfInstrument(row.code);
  const isin = row.isin !== undefined ? row.isin : (existing?.isin ?? null);
  const tick = row.tick_size_cents ?? existing?.tick_size_cents ?? DEFAULT_TICK_SIZE_CENTS;
  const details: ErrorDetail[] = [];
  if (row.currency !== undefined && row.currency !== CURRENCY_OF_EXCHANGE[exchange]) {
    details.push({
      field: 'currency',
      rule: 'exchange_currency',
      value: row.currency,
      message: `${exchange} trades in ${CURRENCY_OF_EXCHANGE[exchange]}`,
    });
  }
  if (row.isin !== undefined && row.isin !== null && !isValidIsin(row.isin)) {
    details.push({
      field: 'isin',
      rule: 'check_digit',
      value: row.isin,
      message: 'the last digit is not the ISIN check digit of the first eleven characters',
    });
  }
  if (row.reference_price_cents % tick !== 0) {
    details.push({
      field: 'reference_price_cents',
      rule: 'tick_size',
      value: row.reference_price_cents,
      message: `must be a multiple of the tick size, ${tick} cents`,
    });
  }
  if (details.length > 0) return { details };
  return {
    row: {
      code: row.code,
      exchange,
      class: row.class,
      name: row.name,
      isin,
      lot_size: row.lot_size ?? existing?.lot_size ?? DEFAULT_LOT_SIZE,
      tick_size_cents: tick,
      reference_price_cents: row.reference_price_cents,
      price_band_bps:
        row.price_band_bps !== undefined
          ? row.price_band_bps
          : existing !== undefined
            ? existing.price_band_bps
            : defaultPriceBandBps(exchange, row.class),
      status: row.status ?? 'active',
      created_at: existing?.created_at ?? nowMs,
      updated_at: nowMs,
    },
  };
}

/** Inserts or updates instruments, keyed by code (the exchange comes from it); the contract of runImport. */
export async function importInstruments(
  trx: Kysely<Database>,
  input: unknown,
  options: { now: Date; allowPartial?: boolean },
): Promise<ImportReport> {
  const codes = new Map<string, number>();
  return runImport<InstrumentImportRow, InstrumentRow>(
    input,
    'instruments',
    options,
    validateInstrumentRow,
    async (row, index) => {
      if (codes.has(row.code))
        return { details: [{ field: 'code', rule: 'unique', value: row.code, message: `same code as row ${codes.get(row.code)}` }] };
      codes.set(row.code, index);
      const existing = await findInstrument(trx, row.code);
      const made = instrumentFromImport(row, existing, options.now.getTime());
      if ('details' in made) return made;
      return { id: row.code, action: existing === undefined ? 'created' : 'updated', row: made.row };
    },
    (row) => upsertInstrument(trx, row),
  );
}

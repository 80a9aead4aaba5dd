export type InstrumentStatus = 'active' | 'suspended';

/** One instrument of the catalogue. Its currency is its exchange's (markets.ts), so it is not stored. */
export interface InstrumentTable {
  code: string;
  exchange: string;
  class: string;
  name: string;
  /** ISO 6166, or null when unknown. */
  isin: string | null;
  lot_size: number;
  tick_size_cents: number;
  /** The previous close, in cents of the instrument's currency; on the tick grid. */
  reference_price_cents: number;
  /** Basis points either side of the reference price; null: no band. */
  price_band_bps: number | null;
  status: InstrumentStatus;
  created_at: number;
  updated_at: number;
}

export type InstrumentRow = InstrumentTable;

/** One day's reference rate of a currency against the CFA franc. */
export interface FxRateTable {
  /** ISO 4217 code of the currency (GHS). */
  currency: string;
  /** The UTC day the rate applies to, YYYY-MM-DD. */
  day: string;
  /** FCFA per unit of the currency, as the decimal string imported (exact). */
  rate: string;
  /** Where the operator took the rate from (free text), or null. */
  source: string | null;
  created_at: number;
  updated_at: number;
}

export type FxRateRow = FxRateTable;

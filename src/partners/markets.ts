/** Jurisdictions, exchanges and asset classes of the regional markets the service routes to. */
export const JURISDICTIONS = ['UEMOA', 'CEMAC', 'GHANA'] as const;
export type Jurisdiction = (typeof JURISDICTIONS)[number];

export const EXCHANGES = ['BRVM', 'BVMAC', 'GSE'] as const;
export type Exchange = (typeof EXCHANGES)[number];

/** The partner capabilities; an instrument's class is one of them. */
export const CAPABILITIES = ['equities', 'bonds', 'opcvm', 'reit', 'money_market', 'junior_board'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const JURISDICTION_OF_EXCHANGE: Readonly<Record<Exchange, Jurisdiction>> = {
  BRVM: 'UEMOA',
  BVMAC: 'CEMAC',
  GSE: 'GHANA',
};

/** ISO 4217 codes of the exchanges' currencies: the two CFA francs and the Ghanaian cedi. */
export const CURRENCIES = ['XOF', 'XAF', 'GHS'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Every instrument trades in its exchange's currency, so an instrument's currency is its exchange's. */
export const CURRENCY_OF_EXCHANGE: Readonly<Record<Exchange, Currency>> = {
  BRVM: 'XOF',
  BVMAC: 'XAF',
  GSE: 'GHS',
};

/** `<TICKER>.<EXCHANGE>`, ticker 1 to 12 of [A-Z0-9]. */
export const INSTRUMENT_CODE_PATTERN = '^[A-Z0-9]{1,12}\\.(BRVM|BVMAC|GSE)$';

export function exchangeOfInstrument(code: string): Exchange {
  return code.slice(code.lastIndexOf('.') + 1) as Exchange;
}

export function currencyOfInstrument(code: string): Currency {
  return CURRENCY_OF_EXCHANGE[exchangeOfInstrument(code)];
}

/**
 * The price band an instrument gets when its import row does not give one, in basis points either
 * side of the reference price. BRVM equities move at most 7.5 % a session; the other exchanges' and
 * classes' figures are this service's defaults, to be replaced by each row's own. Funds (`opcvm`) and
 * money-market bills trade at a net asset value or an auction price rather than under a band: null.
 */
const DEFAULT_BAND_BPS: Readonly<Record<Exchange, number>> = { BRVM: 750, BVMAC: 1000, GSE: 1000 };

export function defaultPriceBandBps(exchange: Exchange, cls: Capability): number | null {
  return cls === 'opcvm' || cls === 'money_market' ? null : DEFAULT_BAND_BPS[exchange];
}

/** Without a tick in its import row, an instrument accepts any whole number of cents. */
export const DEFAULT_TICK_SIZE_CENTS = 1;
export const DEFAULT_LOT_SIZE = 1;

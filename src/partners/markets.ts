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

/** `<TICKER>.<EXCHANGE>`, ticker 1 to 12 of [A-Z0-9]. */
export const INSTRUMENT_CODE_PATTERN = '^[A-Z0-9]{1,12}\\.(BRVM|BVMAC|GSE)$';

export function exchangeOfInstrument(code: string): Exchange {
  return code.slice(code.lastIndexOf('.') + 1) as Exchange;
}

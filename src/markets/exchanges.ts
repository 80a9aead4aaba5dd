import { EXCHANGES, JURISDICTION_OF_EXCHANGE, type Exchange, type Jurisdiction } from '../partners/markets.js';

export { EXCHANGES, type Exchange };

export type Currency = 'XOF' | 'XAF' | 'GHS';

/** What the API says of an exchange (`GET /v1/exchanges`). */
export interface ExchangeInfo {
  code: Exchange;
  name: string;
  jurisdiction: Jurisdiction;
  currency: Currency;
  /** Open days of the exchange's calendar between a trade and its settlement (T+n). */
  settlement_days: number;
}

/**
 * The exchanges, with the settlement cycle each publishes for equities: BRVM T+3 (its central
 * depository, DC/BR), BVMAC T+3 (the CEMAC central depository), GSE T+3 (equities; the GSE settles
 * government bonds on T+2, which this figure does not describe).
 */
export const EXCHANGE_INFO: Readonly<Record<Exchange, ExchangeInfo>> = {
  BRVM: {
    code: 'BRVM',
    name: 'Bourse Régionale des Valeurs Mobilières',
    jurisdiction: JURISDICTION_OF_EXCHANGE.BRVM,
    currency: 'XOF',
    settlement_days: 3,
  },
  BVMAC: {
    code: 'BVMAC',
    name: "Bourse des Valeurs Mobilières de l'Afrique Centrale",
    jurisdiction: JURISDICTION_OF_EXCHANGE.BVMAC,
    currency: 'XAF',
    settlement_days: 3,
  },
  GSE: { code: 'GSE', name: 'Ghana Stock Exchange', jurisdiction: JURISDICTION_OF_EXCHANGE.GSE, currency: 'GHS', settlement_days: 3 },
};

export function isExchange(code: string): code is Exchange {
  return (EXCHANGES as readonly string[]).includes(code);
}

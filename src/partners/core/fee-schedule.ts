import type { Capability } from '../markets.js';
import {
  bpsRate,
  type Commission,
  type ExchangeFeeType,
  type FeeSchedule,
  type FeeType,
  type RoundingMode,
  type Rounding,
  type Tax,
} from './fees.js';

/**
 * Fee schedule versions as the files state them (fee-file.ts checks them) and as the database
 * stores them, and the schedule a fill is priced with (pure). Rates are basis points written as JSON
 * numbers with at most four decimals; `String(rate)` gives back the decimal the file wrote.
 */

export interface RoundingSpec {
  /** Default `half_up`. */
  mode?: RoundingMode;
  /** Default 1 (a cent); 100 rounds to whole units of the currency. */
  increment_cents?: number;
}

export interface TaxSpec {
  name: string;
  rate_bps: number;
  on: FeeType[];
  rounding?: RoundingSpec;
}

export interface CommissionSpec {
  rate_bps: number;
  minimum_cents: number;
  rounding?: RoundingSpec;
}

/** One version of a partner's schedule (the partner import file's `fees` member holds a list of them). */
export interface PartnerFeeVersion {
  effective_from: string;
  source: string;
  assumptions?: string;
  commission: CommissionSpec;
  /** Another commission for some instrument classes (bonds are often cheaper). */
  by_class?: Partial<Record<Capability, CommissionSpec>>;
  /** Replaces the exchange's tax for this partner's fills (null: none), e.g. another state's VAT rate. */
  tax?: TaxSpec | null;
}

export interface ComponentSpec {
  type: ExchangeFeeType;
  name: string;
  rate_bps: number;
  rounding?: RoundingSpec;
  /** Only for these classes; every class when absent. */
  classes?: Capability[];
}

/** One version of an exchange's schedule (`cauri fees import`, and the shipped fees/ files). */
export interface ExchangeFeeVersion {
  exchange: string;
  effective_from: string;
  source: string;
  assumptions?: string;
  components: ComponentSpec[];
  tax: TaxSpec | null;
}

export function roundingOf(spec: RoundingSpec | undefined): Rounding {
  return { mode: spec?.mode ?? 'half_up', increment_cents: BigInt(spec?.increment_cents ?? 1) };
}

const rateOf = (bps: number) => bpsRate(String(bps));

function commissionOf(spec: CommissionSpec): Commission {
  return { rate: rateOf(spec.rate_bps), minimum_cents: BigInt(spec.minimum_cents), rounding: roundingOf(spec.rounding) };
}

function taxOf(spec: TaxSpec | null): Tax | null {
  return spec === null ? null : { rate: rateOf(spec.rate_bps), on: spec.on, rounding: roundingOf(spec.rounding) };
}

/**
 * The schedule a fill of an instrument of `instrumentClass` is priced with: the partner's commission
 * (its class's when it names one), the exchange's components, and the partner's tax when it states
 * one, else the exchange's. A missing version charges nothing of its part.
 */
export function scheduleFor(
  partner: PartnerFeeVersion | null,
  exchange: ExchangeFeeVersion | null,
  instrumentClass: Capability | null,
): FeeSchedule {
  const commission =
    partner === null
      ? null
      : commissionOf((instrumentClass === null ? undefined : partner.by_class?.[instrumentClass]) ?? partner.commission);
  const tax = partner !== null && partner.tax !== undefined ? partner.tax : (exchange?.tax ?? null);
  return {
    commission,
    components: (exchange?.components ?? []).map((c) => ({
      type: c.type,
      rate: rateOf(c.rate_bps),
      rounding: roundingOf(c.rounding),
      classes: c.classes ?? null,
    })),
    tax: taxOf(tax),
  };
}

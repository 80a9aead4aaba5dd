import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import { FixMember } from './fix-settings.js';
import { PartnerFeesMember } from './fee-file.js';
import { DECIMAL_RATE_PATTERN } from './core/decimal-rate.js';
import { ISIN_PATTERN } from './core/isin.js';
import { CAPABILITIES, CURRENCIES, EXCHANGES, INSTRUMENT_CODE_PATTERN, JURISDICTIONS } from './markets.js';

export const JurisdictionSchema = StringEnum(JURISDICTIONS, { description: 'UEMOA, CEMAC or GHANA.' });
export const CapabilitySchema = StringEnum(CAPABILITIES);
export const ExchangeSchema = StringEnum(EXCHANGES);
export const CurrencySchema = StringEnum(CURRENCIES, {
  description: 'ISO 4217: XOF (BRVM), XAF (BVMAC), GHS (GSE). Every amount ending in _cents is in hundredths of it.',
});

const MAX_PRICE_CENTS = 1_000_000_000_000;
const MAX_LOT = 1_000_000_000;

export const SgiPartner = Type.Object(
  {
    id: Type.String({ description: 'Partner identifier (sgi_...), used as rcpt_to in orders.' }),
    name: Type.String(),
    jurisdiction: JurisdictionSchema,
    capabilities: Type.Array(CapabilitySchema),
    approved_since: Type.Optional(Type.String({ format: 'date' })),
  },
  { title: 'SgiPartner' },
);
export type SgiPartner = Static<typeof SgiPartner>;

export const Instrument = Type.Object(
  {
    code: Type.String({ description: '<TICKER>.<EXCHANGE>', pattern: INSTRUMENT_CODE_PATTERN }),
    exchange: ExchangeSchema,
    class: CapabilitySchema,
    name: Type.String(),
    currency: CurrencySchema,
    isin: Nullable(Type.String({ pattern: ISIN_PATTERN, description: 'ISO 6166 identifier, or null when not known.' })),
    lot_size: Type.Integer({ minimum: 1, description: "An order's qty is a whole multiple of it." }),
    tick_size_cents: Type.Integer({ minimum: 1, description: 'A limit price is a whole multiple of it, in cents of the currency.' }),
    reference_price_cents: Type.Integer({ minimum: 1, description: 'The previous close, in cents of the currency.' }),
    price_band_bps: Nullable(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description:
          'Limit prices must lie within this many basis points either side of the reference price, the limits rounded inwards to the tick: low = ceil(reference x (1 - bps/10000) / tick) x tick (at least one tick), high = floor(reference x (1 + bps/10000) / tick) x tick. A market buy counts against a monthly cap at qty x high. null: no band.',
      }),
    ),
    status: StringEnum(['active', 'suspended']),
  },
  { title: 'Instrument' },
);
export type Instrument = Static<typeof Instrument>;

/** What a partner requires of orders beyond the common checks (core/checks.ts); each member false when left out. */
export const PartnerChecksMember = Type.Object(
  {
    accounts: Type.Optional(
      Type.Boolean({
        description:
          "Every order needs the investor's account number at the SGI: registered by the client for the subject, else the partner's default account (`fix.account`). Without it, a partner requires no account: an order with none goes without (over FIX, without Account (1)).",
      }),
    ),
    holdings: Type.Optional(
      Type.Boolean({
        description: 'Refuse a sell beyond the position available (held, plus bought, less pending sells): 422 rule `holdings`.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One row of `cauri partners import`: `id` is optional, rows without one are matched by name. */
export const PartnerImportRow = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^sgi_[0-7][0-9a-hjkmnp-tv-z]{25}$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    jurisdiction: JurisdictionSchema,
    capabilities: Type.Array(CapabilitySchema, { minItems: 1, uniqueItems: true }),
    approved_since: Type.Optional(Type.String({ format: 'date' })),
    status: Type.Optional(StringEnum(['approved', 'pending', 'suspended'])),
    connector: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,63}$' })),
    /** The FIX session settings, with `"connector": "fix"`; kept from the previous import when absent. */
    fix: Type.Optional(FixMember),
    /** Kept from the previous import when absent; `{}` requires nothing more. */
    checks: Type.Optional(PartnerChecksMember),
    /** Commission schedule versions (docs/post-trade.md); versions not listed are kept as stored. */
    fees: Type.Optional(PartnerFeesMember),
  },
  { additionalProperties: false },
);
export type PartnerImportRow = Static<typeof PartnerImportRow>;

/**
 * One row of `cauri instruments import`. The exchange and the currency follow from the code. Members
 * left out keep their stored value when the row updates an instrument, else take their default
 * (`status` excepted: it is `active` when left out).
 */
export const InstrumentImportRow = Type.Object(
  {
    code: Type.String({ pattern: INSTRUMENT_CODE_PATTERN }),
    class: CapabilitySchema,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    reference_price_cents: Type.Integer({ minimum: 1, maximum: MAX_PRICE_CENTS }),
    status: Type.Optional(StringEnum(['active', 'suspended'])),
    /** Checked against the exchange's currency when given. */
    currency: Type.Optional(CurrencySchema),
    isin: Type.Optional(Nullable(Type.String({ pattern: ISIN_PATTERN }))),
    lot_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOT })),
    tick_size_cents: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PRICE_CENTS })),
    price_band_bps: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10_000 }))),
  },
  { additionalProperties: false },
);
export type InstrumentImportRow = Static<typeof InstrumentImportRow>;

/** Currencies that need a reference rate to count against a cap in FCFA (XOF and XAF are at par). */
export const RATED_CURRENCIES = ['GHS'] as const;

/** One row of `cauri fx import`: FCFA per unit of `currency` on `date`. */
export const FxRateImportRow = Type.Object(
  {
    date: Type.String({ format: 'date' }),
    currency: StringEnum(RATED_CURRENCIES),
    rate: Type.String({ pattern: DECIMAL_RATE_PATTERN, description: 'FCFA per unit, a decimal string such as "55.4012"' }),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type FxRateImportRow = Static<typeof FxRateImportRow>;

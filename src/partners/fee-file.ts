import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { ErrorDetail } from '../lib/errors.js';
import { compileValidator } from '../lib/validation.js';
import { CAPABILITIES, EXCHANGES } from './markets.js';
import { EXCHANGE_FEE_TYPES, FEE_TYPES, ROUNDING_MODES } from './core/fees.js';
import type { CommissionSpec, ExchangeFeeVersion, PartnerFeeVersion, TaxSpec } from './core/fee-schedule.js';

/**
 * The fee schedule files: exchange schedules (`cauri fees import`, and the repository's fees/ folder)
 * and the `fees` member of the partner import file. Each version applies from its `effective_from`
 * (a trade date) until the next version's; each names its source.
 */

const MAX_CENTS = 1_000_000_000_000_000;

const RateBps = (description: string) =>
  Type.Number({ minimum: 0, maximum: 10_000, description: `${description} In basis points (1 bps = 0.01 %), at most four decimals.` });

const RoundingSchema = Type.Object(
  {
    mode: Type.Optional(
      StringEnum(ROUNDING_MODES, { description: '`half_up` (default: to the nearest increment, a half up), `down` or `up`.' }),
    ),
    increment_cents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: 'The amount is a whole multiple of it (default 1; 100 for whole francs).',
      }),
    ),
  },
  { additionalProperties: false },
);

const TaxSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    rate_bps: RateBps('The tax rate on the amounts of the `on` components.'),
    on: Type.Array(StringEnum(FEE_TYPES.filter((t) => t !== 'tax')), { minItems: 1, uniqueItems: true }),
    rounding: Type.Optional(RoundingSchema),
  },
  { additionalProperties: false },
);

const CommissionSchema = Type.Object(
  {
    rate_bps: RateBps("The partner's commission on the gross amount."),
    minimum_cents: Type.Integer({
      minimum: 0,
      maximum: MAX_CENTS,
      description: "Charged at least once per order and trade date, in cents of the partner's currency.",
    }),
    rounding: Type.Optional(RoundingSchema),
  },
  { additionalProperties: false },
);

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** One version of a partner's schedule; the partner import file's `fees` member is a list of them. */
export const PartnerFeeVersionSchema = Type.Object(
  {
    effective_from: Type.String({ format: 'date' }),
    source: Text(4000),
    assumptions: Type.Optional(Text(4000)),
    commission: CommissionSchema,
    by_class: Type.Optional(
      Type.Object(Object.fromEntries(CAPABILITIES.map((c) => [c, Type.Optional(CommissionSchema)])), {
        additionalProperties: false,
        minProperties: 1,
      }),
    ),
    tax: Type.Optional(Nullable(TaxSchema)),
  },
  { additionalProperties: false },
);

export const PartnerFeesMember = Type.Array(PartnerFeeVersionSchema, {
  minItems: 1,
  maxItems: 50,
  description:
    "The partner's fee schedule versions, each applying from its effective_from (docs/post-trade.md). Versions not listed stay as stored.",
});

export const ExchangeFeeEntry = Type.Object(
  {
    exchange: StringEnum(EXCHANGES),
    effective_from: Type.String({ format: 'date' }),
    source: Text(4000),
    assumptions: Type.Optional(Text(4000)),
    components: Type.Array(
      Type.Object(
        {
          type: StringEnum(EXCHANGE_FEE_TYPES),
          name: Text(200),
          rate_bps: RateBps('On the gross amount.'),
          rounding: Type.Optional(RoundingSchema),
          classes: Type.Optional(Type.Array(StringEnum(CAPABILITIES), { minItems: 1, uniqueItems: true })),
        },
        { additionalProperties: false },
      ),
      { maxItems: 32 },
    ),
    tax: Nullable(TaxSchema),
  },
  { additionalProperties: false },
);
export type ExchangeFeeEntry = Static<typeof ExchangeFeeEntry>;

/** A rate's decimals: JSON numbers print back as the shortest decimal that reads as them, the one written. */
function checkRate(field: string, rate: number, details: ErrorDetail[]): void {
  if (!/^(0|[1-9][0-9]*)(\.[0-9]{1,4})?$/.test(String(rate)))
    details.push({ field, rule: 'precision', value: rate, message: 'at most four decimal places of a basis point' });
}

function checkTax(field: string, tax: TaxSpec | null | undefined, details: ErrorDetail[]): void {
  if (tax !== null && tax !== undefined) checkRate(`${field}.rate_bps`, tax.rate_bps, details);
}

/** A commission's minimum is a whole number of its rounding increments, so that it is charged as stated. */
function checkMinimum(at: string, commission: CommissionSpec, details: ErrorDetail[]): void {
  const increment = commission.rounding?.increment_cents ?? 1;
  if (commission.minimum_cents % increment !== 0) {
    details.push({
      field: `${at}.minimum_cents`,
      rule: 'increment',
      value: commission.minimum_cents,
      message: `a whole multiple of the rounding increment (${increment})`,
    });
  }
}

const validateEntryShape = compileValidator(ExchangeFeeEntry, 'entry');
const validateVersionShape = compileValidator(PartnerFeeVersionSchema, 'version');

/** Every problem of one exchange entry (member paths relative to it), or none. */
export function validateExchangeFeeEntry(value: unknown): ErrorDetail[] {
  const shape = validateEntryShape(value);
  if (shape !== null) return shape;
  const entry = value as ExchangeFeeEntry;
  const details: ErrorDetail[] = [];
  // At most one component of each type for any class, so that a fill lists each type once.
  const seen = new Map<string, number>();
  for (const [i, c] of entry.components.entries()) {
    checkRate(`components.${i}.rate_bps`, c.rate_bps, details);
    for (const cls of c.classes ?? CAPABILITIES) {
      const key = `${c.type}:${cls}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        details.push({
          field: `components.${i}.type`,
          rule: 'unique',
          value: c.type,
          message: `components.${earlier} already charges ${c.type} on ${cls}`,
        });
        break;
      }
      seen.set(key, i);
    }
  }
  checkTax('tax', entry.tax, details);
  return details;
}

/** Every problem of a partner's `fees` member (paths from `fees`), or none. */
export function validatePartnerFees(value: unknown): ErrorDetail[] {
  if (!Array.isArray(value)) return [{ field: 'fees', rule: 'type', value: null, message: 'must be an array of schedule versions' }];
  const details: ErrorDetail[] = [];
  const dates = new Map<string, number>();
  for (const [i, raw] of value.entries()) {
    const shape = validateVersionShape(raw);
    if (shape !== null) {
      details.push(...shape.map((d) => ({ ...d, field: d.field === 'version' ? `fees.${i}` : `fees.${i}.${d.field}` })));
      continue;
    }
    const v = raw as PartnerFeeVersion;
    const at = `fees.${i}`;
    const earlier = dates.get(v.effective_from);
    if (earlier !== undefined)
      details.push({ field: `${at}.effective_from`, rule: 'unique', value: v.effective_from, message: `same date as fees.${earlier}` });
    else dates.set(v.effective_from, i);
    checkRate(`${at}.commission.rate_bps`, v.commission.rate_bps, details);
    checkMinimum(`${at}.commission`, v.commission, details);
    for (const [cls, c] of Object.entries(v.by_class ?? {})) {
      if (c === undefined) continue;
      checkRate(`${at}.by_class.${cls}.rate_bps`, c.rate_bps, details);
      checkMinimum(`${at}.by_class.${cls}`, c, details);
    }
    checkTax(`${at}.tax`, v.tax, details);
  }
  return details;
}

/** The stored form of a valid entry: exactly what the file stated, in a fixed member order. */
export function exchangeVersionOf(entry: ExchangeFeeEntry): ExchangeFeeVersion {
  return {
    exchange: entry.exchange,
    effective_from: entry.effective_from,
    source: entry.source,
    ...(entry.assumptions === undefined ? {} : { assumptions: entry.assumptions }),
    components: entry.components,
    tax: entry.tax,
  };
}

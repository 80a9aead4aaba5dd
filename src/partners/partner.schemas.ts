import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';
import { FixMember } from '../routing/fix/settings.js';
import { CAPABILITIES, EXCHANGES, INSTRUMENT_CODE_PATTERN, JURISDICTIONS } from './markets.js';

export const JurisdictionSchema = StringEnum(JURISDICTIONS, { description: 'UEMOA, CEMAC or GHANA.' });
export const CapabilitySchema = StringEnum(CAPABILITIES);
export const ExchangeSchema = StringEnum(EXCHANGES);

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
    reference_price_cents: Type.Integer({ minimum: 1, description: 'Reference price in cents of XOF.' }),
    status: StringEnum(['active', 'suspended']),
  },
  { title: 'Instrument' },
);
export type Instrument = Static<typeof Instrument>;

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
  },
  { additionalProperties: false },
);
export type PartnerImportRow = Static<typeof PartnerImportRow>;

export const InstrumentImportRow = Type.Object(
  {
    code: Type.String({ pattern: INSTRUMENT_CODE_PATTERN }),
    class: CapabilitySchema,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    reference_price_cents: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
    status: Type.Optional(StringEnum(['active', 'suspended'])),
  },
  { additionalProperties: false },
);
export type InstrumentImportRow = Static<typeof InstrumentImportRow>;

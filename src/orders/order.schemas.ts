import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, PageQuery, QueryObject, StringEnum } from '../http/schemas.js';
import { INSTRUMENT_CODE_PATTERN } from '../partners/markets.js';
import { CurrencySchema } from '../partners/partner.schemas.js';
import { ORDER_STATUSES } from './core/state-machine.js';

export const MAX_QTY = 1_000_000_000;
export const MAX_LIMIT_PRICE_CENTS = 1_000_000_000_000;
export const FAILURE_REASONS = ['sgi_rejected', 'insufficient_funds', 'instrument_suspended'] as const;

export const OrderRequest = Type.Object(
  {
    rcpt_to: Type.String({ maxLength: 64, description: 'SGI partner id receiving the routed order' }),
    kyc_attestation_id: Type.String({ maxLength: 64, description: 'Attestation of the investor, issued to this client' }),
    instrument: Type.String({ pattern: INSTRUMENT_CODE_PATTERN, description: '<TICKER>.<EXCHANGE>, for example SNTS.BRVM' }),
    side: StringEnum(['buy', 'sell']),
    qty: Type.Integer({ minimum: 1, maximum: MAX_QTY, description: "A multiple of the instrument's lot_size" }),
    limit_price_cents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT_PRICE_CENTS,
        description: "Omitted: a market order. In cents of the instrument's currency; a multiple of its tick_size_cents and within its price band.",
      }),
    ),
    client_metadata: Type.Optional(
      Type.Object({}, { additionalProperties: true, maxProperties: 50, description: 'Free-form; at most 8 KiB serialised, 50 members, depth 5. Echoed back.' }),
    ),
    submitted_at: Type.Optional(DateTime('Accepted and ignored (it appears in the specification\'s example)')),
  },
  { additionalProperties: false, title: 'OrderRequest' },
);
export type OrderRequest = Static<typeof OrderRequest>;

export const Order = Type.Object(
  {
    id: Type.String(),
    status: StringEnum(ORDER_STATUSES),
    rcpt_to: Type.String(),
    kyc_attestation_id: Type.String(),
    instrument: Type.String(),
    currency: CurrencySchema,
    side: StringEnum(['buy', 'sell']),
    qty: Type.Integer(),
    limit_price_cents: Nullable(Type.Integer()),
    filled_qty: Type.Integer(),
    average_fill_price_cents: Nullable(Type.Integer()),
    failure_reason: Nullable(StringEnum(FAILURE_REASONS)),
    client_metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    created_at: DateTime('Creation time, with milliseconds'),
    updated_at: DateTime(),
  },
  { title: 'Order' },
);
export type Order = Static<typeof Order>;

export const OrderListQuery = QueryObject({
    ...PageQuery,
    status: Type.Optional(StringEnum(ORDER_STATUSES)),
    rcpt_to: Type.Optional(Type.String({ maxLength: 64 })),
    instrument: Type.Optional(Type.String({ pattern: INSTRUMENT_CODE_PATTERN })),
    kyc_attestation_id: Type.Optional(Type.String({ maxLength: 64 })),
    created_gte: Type.Optional(DateTime()),
    created_lt: Type.Optional(DateTime()),
});
export type OrderListQuery = Static<typeof OrderListQuery>;

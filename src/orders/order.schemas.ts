import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, OPTIONAL_BODY, PageQuery, QueryObject, StringEnum } from '../http/schemas.js';
import { INSTRUMENT_CODE_PATTERN } from '../partners/markets.js';
import { CurrencySchema } from '../partners/partner.schemas.js';
import { CANCEL_REASONS, FAILURE_REASONS, PENDING_REQUESTS, REQUEST_REFUSALS, TIME_IN_FORCE } from './core/lifecycle.js';
import { ORDER_STATUSES } from './core/state-machine.js';
import { FEE_TYPES } from '../partners/core/fees.js';
import { SETTLEMENT_STATUSES } from './core/settlement.js';

export const MAX_QTY = 1_000_000_000;
export const MAX_LIMIT_PRICE_CENTS = 1_000_000_000_000;

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
        description:
          "Omitted: a market order. In cents of the instrument's currency; a multiple of its tick_size_cents and within its price band.",
      }),
    ),
    client_metadata: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          maxProperties: 50,
          description: 'Free-form; at most 8 KiB serialised, 50 members, depth 5. Echoed back.',
        },
      ),
    ),
    time_in_force: Type.Optional(
      StringEnum(TIME_IN_FORCE, {
        description:
          "How long the order stays open: `day` (default: until the close of the exchange's session), `gtc` (until cancelled), `gtd` (until the close of `expire_date`), `ioc` (what executes at once, the rest cancelled), `fok` (all at once or nothing).",
      }),
    ),
    expire_date: Type.Optional(
      Type.String({
        description: 'YYYY-MM-DD, from today (UTC) to a year ahead; required with `gtd` and only with it (422 `expire_date` otherwise).',
        examples: ['2026-12-31'],
      }),
    ),
    submitted_at: Type.Optional(DateTime("Accepted and ignored (it appears in the specification's example)")),
    test_clock: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Sandbox only: a test clock of this client (`clk_...`); the order lives on its time (422 `sandbox_only` in production, `exists` for an unknown clock).',
      }),
    ),
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
    time_in_force: StringEnum(TIME_IN_FORCE),
    expire_date: Nullable(Type.String({ format: 'date', description: 'YYYY-MM-DD for `gtd`; null otherwise.' })),
    expires_at: Nullable(DateTime("When a `day` or `gtd` order expires (its exchange's close); null for the others.")),
    test_clock: Type.Optional(
      Type.String({ description: 'Sandbox: the test clock the order lives on; absent for an order on real time.' }),
    ),
    cancel_reason: Nullable(
      StringEnum(CANCEL_REASONS, {
        description:
          'Why a cancelled order was cancelled: `requested` (by the client), `expired` (its time in force ran out), `unfilled` (the rest of an ioc or fok order), `partner` (by the SGI); null unless cancelled.',
      }),
    ),
    pending_request: Nullable(
      StringEnum(PENDING_REQUESTS, { description: 'A cancel or amend sent to the partner and not yet answered; null when none.' }),
    ),
    pending_changes: Nullable(
      Type.Object(
        { qty: Type.Integer(), limit_price_cents: Type.Integer() },
        {
          additionalProperties: false,
          description: 'The quantity and limit a pending amend asks for; null unless `pending_request` is `pending_amend`.',
        },
      ),
    ),
    last_refusal: Nullable(
      Type.Object(
        {
          request: StringEnum(['cancel', 'amend']),
          reason: StringEnum(REQUEST_REFUSALS),
          refused_at: DateTime(),
        },
        { additionalProperties: false, description: "The partner's latest refusal of a cancel or amend of this order; null when none." },
      ),
    ),
  },
  { title: 'Order' },
);
export type Order = Static<typeof Order>;

/** The data of an `order.executed` event: one fill, with the order's totals after it. */
export const OrderExecutedEvent = Type.Object(
  {
    order_id: Type.String(),
    rcpt_to: Type.String(),
    instrument: Type.String(),
    side: StringEnum(['buy', 'sell']),
    filled_qty: Type.Integer({ description: 'Cumulative over every fill so far' }),
    average_fill_price_cents: Type.Integer({ description: 'Quantity-weighted mean of every fill so far, rounded half up' }),
    executed_at: DateTime(),
    exchange_ref: Type.String(),
    fill_qty: Type.Integer({ description: 'This fill alone' }),
    fill_price_cents: Type.Integer(),
    status: StringEnum(['partially_filled', 'filled']),
  },
  { title: 'OrderExecutedEvent' },
);
export type OrderExecutedEvent = Static<typeof OrderExecutedEvent>;

/** A cancel takes no members: no body, an empty one and `{}` are the same request. */
export const CancelRequest = Type.Object(
  {},
  {
    additionalProperties: false,
    title: 'CancelRequest',
    description: 'Optional: no body is the same as `{}`. A cancel takes no members.',
    ...OPTIONAL_BODY,
  },
);

export const AmendRequest = Type.Object(
  {
    qty: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_QTY,
        description: "The new total quantity; above what has already filled, and a multiple of the instrument's lot_size.",
      }),
    ),
    limit_price_cents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LIMIT_PRICE_CENTS,
        description:
          "The new limit price, in cents of the instrument's currency; a multiple of its tick_size_cents and within its price band.",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'AmendRequest' },
);
export type AmendRequest = Static<typeof AmendRequest>;

export const FeeSchema = Type.Object(
  {
    type: StringEnum(FEE_TYPES, {
      description:
        "`commission` (the partner's), `exchange`, `depository`, `regulator`, `levy` (the exchange's and its authorities'), `tax` (on fees, such as VAT).",
    }),
    amount_cents: Type.Integer({ description: "In cents of the order's currency." }),
  },
  { additionalProperties: false, title: 'Fee' },
);

export const FeeScheduleUsed = Type.Object(
  {
    scope: StringEnum(['partner', 'exchange']),
    id: Type.String({ description: "The partner's id (`sgi_...`) or the exchange's code." }),
    effective_from: Type.String({ format: 'date', description: 'YYYY-MM-DD: the version of the schedule used.' }),
  },
  { additionalProperties: false, title: 'FeeScheduleUsed' },
);

export const Fill = Type.Object(
  {
    id: Type.String(),
    order_id: Type.String(),
    qty: Type.Integer(),
    price_cents: Type.Integer(),
    executed_at: DateTime('When the trade executed on the exchange'),
    exchange_ref: Type.String({ description: "The exchange's trade reference" }),
    gross_cents: Type.Integer({ description: '`qty` times `price_cents`' }),
    fees: Type.Array(FeeSchema, {
      description:
        'Fees and taxes charged on the execution, fixed when it was applied, from the schedules in force on its trade date (docs/post-trade.md); each type at most once.',
    }),
    net_cents: Type.Integer({ description: 'A buy: gross plus fees; a sell: gross minus fees (negative when the fees exceed the gross).' }),
    settlement_date: Type.String({
      format: 'date',
      description: "YYYY-MM-DD: the trade date plus the exchange's settlement days, in open days of its calendar",
    }),
    settlement_status: StringEnum(SETTLEMENT_STATUSES, {
      description: '`settled` from the settlement date on (00:00 UTC, on the test clock for an order on one), `pending` before.',
    }),
    fee_schedules: Type.Array(FeeScheduleUsed, {
      description: 'The schedule versions the fees came from (none when no schedule was in force).',
    }),
  },
  { title: 'Fill' },
);
export type Fill = Static<typeof Fill>;

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

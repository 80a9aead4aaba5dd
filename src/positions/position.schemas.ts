import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, NullableInteger, PageQuery, QueryObject } from '../http/schemas.js';
import { SUBJECT_ID_PATTERN } from '../kyc/kyc.schemas.js';
import { INSTRUMENT_CODE_PATTERN } from '../partners/markets.js';
import { CurrencySchema } from '../partners/partner.schemas.js';

/** The largest quantity a statement line can hold, and the largest average cost it can give. */
export const MAX_HOLDING_QTY = 1_000_000_000_000;
export const MAX_AVERAGE_COST_CENTS = 1_000_000_000_000;
/** Lines of one statement at most. */
export const MAX_HOLDINGS = 1000;

const Cents = (description: string) => Type.Integer({ description });
const Day = (description: string) => Type.String({ format: 'date', description });

export const Position = Type.Object(
  {
    subject_id: Type.String(),
    rcpt_to: Type.String({ description: 'The SGI partner holding the position.' }),
    instrument: Type.String(),
    currency: CurrencySchema,
    qty: Type.Integer({
      description:
        "The statement's holdings plus the shares bought less the shares sold since (fills settling after the statement's date; every fill without a statement). Negative when more was sold than the service knows was held.",
    }),
    settled_qty: Type.Integer({
      description:
        "`qty` less the fills whose settlement date has not come yet: a fill counts as settled from 00:00 UTC of its `settlement_date` (on its order's test clock, for orders on one), when its `settlement_status` becomes `settled`.",
    }),
    average_cost_cents: NullableInteger(
      'The cost of `qty` divided by `qty`, rounded half up: the weighted average of the gross prices paid (fees excluded); sells leave it unchanged. null when `qty` is 0.',
    ),
    reference_price_cents: Nullable(
      Cents("The instrument's reference price (its previous close) from the catalogue; null only for an instrument no longer listed."),
    ),
    market_value_cents: NullableInteger('`qty` times `reference_price_cents`.'),
    unrealised_pnl_cents: NullableInteger(
      '`market_value_cents` less the cost of `qty`: `(reference_price_cents - average cost) x qty`, unrounded average.',
    ),
    realised_pnl_cents: Cents("Sum over the sells since the position's start of `(price - average cost) x qty`, gross of fees."),
    statement_as_of: Nullable(Day('The date of the statement the position starts from; null when it comes from fills alone.')),
    updated_at: DateTime('When a fill or a statement last changed the position'),
  },
  { title: 'Position' },
);
export type Position = Static<typeof Position>;

export const PositionListQuery = QueryObject({
  ...PageQuery,
  subject_id: Type.Optional(Type.String({ pattern: SUBJECT_ID_PATTERN })),
  rcpt_to: Type.Optional(Type.String({ maxLength: 64 })),
  instrument: Type.Optional(Type.String({ pattern: INSTRUMENT_CODE_PATTERN })),
});
export type PositionListQuery = Static<typeof PositionListQuery>;

export const Holding = Type.Object(
  {
    instrument: Type.String({
      pattern: INSTRUMENT_CODE_PATTERN,
      description: "An instrument of the catalogue, traded in the partner's jurisdiction.",
    }),
    qty: Type.Integer({
      minimum: 0,
      maximum: MAX_HOLDING_QTY,
      description: 'Shares held (settled) at the end of the as-of date; 0 states that none are.',
    }),
    average_cost_cents: Type.Integer({
      minimum: 0,
      maximum: MAX_AVERAGE_COST_CENTS,
      description: "The SGI's average cost per share (prix de revient unitaire), in cents of the instrument's currency.",
    }),
  },
  { additionalProperties: false, title: 'Holding' },
);
export type Holding = Static<typeof Holding>;

export const StatementRequest = Type.Object(
  {
    subject_id: Type.String({ pattern: SUBJECT_ID_PATTERN, description: 'The investor, as in their attestations.' }),
    rcpt_to: Type.String({ maxLength: 64, description: 'The SGI partner whose statement it is.' }),
    as_of: Day(
      "The statement's date: its holdings are those settled at the end of that day (UTC). Not in the future, and not before the latest statement of the subject at the partner.",
    ),
    holdings: Type.Array(Holding, {
      maxItems: MAX_HOLDINGS,
      description: 'Every line of the statement, one per instrument: an instrument left out is held at 0.',
    }),
  },
  { additionalProperties: false, title: 'StatementRequest' },
);
export type StatementRequest = Static<typeof StatementRequest>;

export const PositionBreak = Type.Object(
  {
    instrument: Type.String(),
    statement_qty: Type.Integer({ description: 'What the statement declares (0 when it does not list the instrument).' }),
    expected_qty: Type.Integer({
      description:
        "What the service's records give for the statement's date: the previous statement plus the fills settled since (every fill settled by then, before the first statement).",
    }),
    difference_qty: Type.Integer({ description: '`statement_qty - expected_qty`.' }),
  },
  { additionalProperties: false, title: 'PositionBreak' },
);
export type PositionBreak = Static<typeof PositionBreak>;

export const Statement = Type.Object(
  {
    id: Type.String({ description: '`stm_...`' }),
    subject_id: Type.String(),
    rcpt_to: Type.String(),
    as_of: Day("The statement's date."),
    holdings: Type.Array(Holding),
    breaks: Type.Array(PositionBreak, {
      description: "The instruments where the statement disagrees with the service's records; empty when it agrees.",
    }),
    previous_statement_id: Nullable(
      Type.String({ description: 'The statement it was compared with (the latest one dated before it); null for the first.' }),
    ),
    replaces: Nullable(Type.String({ description: 'The statement of the same date this one corrects; null when none.' })),
    replaced_by: Nullable(Type.String({ description: 'The statement of the same date that corrected this one; null while none has.' })),
    created_at: DateTime('When it was declared'),
  },
  { title: 'Statement' },
);
export type Statement = Static<typeof Statement>;

export const StatementListQuery = QueryObject({
  ...PageQuery,
  subject_id: Type.Optional(Type.String({ pattern: SUBJECT_ID_PATTERN })),
  rcpt_to: Type.Optional(Type.String({ maxLength: 64 })),
});
export type StatementListQuery = Static<typeof StatementListQuery>;

/** The data of a `position.break` event. */
export const PositionBreakEvent = Type.Object(
  {
    statement_id: Type.String(),
    subject_id: Type.String(),
    rcpt_to: Type.String(),
    as_of: Day("The statement's date."),
    previous_statement_id: Nullable(Type.String()),
    breaks: Type.Array(PositionBreak, { minItems: 1 }),
  },
  { title: 'PositionBreakEvent' },
);
export type PositionBreakEvent = Static<typeof PositionBreakEvent>;

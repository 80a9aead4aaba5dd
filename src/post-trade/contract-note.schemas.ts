import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, StringEnum } from '../http/schemas.js';
import { FeeSchema, FeeScheduleUsed, Fill } from '../orders/order.schemas.js';
import { CurrencySchema, ExchangeSchema, JurisdictionSchema } from '../partners/partner.schemas.js';
import { SETTLEMENT_STATUSES } from '../orders/core/settlement.js';
import { ORDER_STATUSES } from '../orders/core/state-machine.js';

export const ContractNote = Type.Object(
  {
    order_id: Type.String(),
    generated_at: DateTime('When this note was produced; its amounts were fixed when each fill was applied.'),
    partner: Type.Object(
      { id: Type.String(), name: Type.String(), jurisdiction: JurisdictionSchema },
      { additionalProperties: false, description: 'The SGI that executed the order.' },
    ),
    subject_id: Type.String({ description: 'The investor, as the client identifies them.' }),
    account: Nullable(Type.String({ description: "The investor's account with the partner; null when none is registered." })),
    kyc_attestation_id: Type.String(),
    instrument: Type.Object(
      {
        code: Type.String(),
        name: Nullable(Type.String({ description: 'null when the instrument is no longer in the catalogue.' })),
        isin: Nullable(Type.String()),
        exchange: ExchangeSchema,
      },
      { additionalProperties: false },
    ),
    side: StringEnum(['buy', 'sell']),
    currency: CurrencySchema,
    order_qty: Type.Integer({ description: 'The quantity ordered.' }),
    limit_price_cents: Nullable(Type.Integer({ description: 'null: a market order.' })),
    order_status: StringEnum(ORDER_STATUSES, { description: "The order's status when the note was produced." }),
    order_created_at: DateTime(),
    filled_qty: Type.Integer({ description: 'The quantity executed: the sum of the fills.' }),
    average_price_cents: Type.Integer({ description: 'The quantity-weighted mean price of the fills, rounded half up.' }),
    trade_date: Type.String({ format: 'date', description: 'YYYY-MM-DD: the trade date of the first fill.' }),
    settlement_date: Type.String({ format: 'date', description: 'YYYY-MM-DD: the latest settlement date of the fills.' }),
    settlement_status: StringEnum(SETTLEMENT_STATUSES, { description: '`settled` once every fill is settled.' }),
    fills: Type.Array(Fill, { minItems: 1, description: 'Oldest first.' }),
    gross_cents: Type.Integer({ description: "The sum of the fills' gross amounts." }),
    fees: Type.Array(FeeSchema, { description: "The fills' fees summed by type." }),
    fees_total_cents: Type.Integer(),
    net_cents: Type.Integer({
      description: 'A buy: gross plus fees, what the investor pays; a sell: gross minus fees, what the investor receives.',
    }),
    fee_schedules: Type.Array(FeeScheduleUsed, { description: "Every schedule version the fills' fees came from." }),
  },
  { additionalProperties: false, title: 'ContractNote' },
);
export type ContractNote = Static<typeof ContractNote>;

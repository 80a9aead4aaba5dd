import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, QueryObject, StringEnum } from '../http/schemas.js';
import { ExchangeSchema, JurisdictionSchema } from '../partners/partner.schemas.js';
import { PHASES } from './calendar.js';

export const ExchangeInfo = Type.Object(
  {
    code: ExchangeSchema,
    name: Type.String(),
    jurisdiction: JurisdictionSchema,
    currency: StringEnum(['XOF', 'XAF', 'GHS'], { description: 'ISO 4217 code of the currency instruments trade in.' }),
    settlement_days: Type.Integer({ minimum: 0, description: 'Open days of the calendar between trade date and settlement (T+n).' }),
  },
  { title: 'Exchange' },
);

export const PhaseSchema = StringEnum(PHASES, { description: 'A trading phase.' });

export const CalendarPhase = Type.Object(
  {
    name: PhaseSchema,
    start: DateTime('UTC, whole seconds.'),
    end: DateTime('UTC, whole seconds; equal to start for an auction held at an instant.'),
  },
  { title: 'CalendarPhase' },
);

export const CalendarDay = Type.Object(
  {
    date: Type.String({ format: 'date' }),
    open: Type.Boolean({ description: 'Whether the exchange trades that day; a closed day has no phases.' }),
    phases: Type.Array(CalendarPhase, { description: 'In order; empty when closed.' }),
  },
  { title: 'CalendarDay' },
);
export type CalendarDay = Static<typeof CalendarDay>;

export const CalendarQuery = QueryObject({
  from: Type.Optional(Type.String({ format: 'date', description: 'First day (YYYY-MM-DD); default today (UTC).' })),
  to: Type.Optional(
    Type.String({ format: 'date', description: 'Last day, included; default 30 days after from. At most 366 days in all.' }),
  ),
});

export const ExchangeClock = Type.Object(
  {
    exchange: ExchangeSchema,
    timestamp: DateTime('The instant the clock was read (UTC, milliseconds).'),
    phase: StringEnum([...PHASES, 'closed'], { description: '`closed` outside every phase (and between sessions).' }),
    is_open: Type.Boolean({
      description: 'True in any phase, pre-open included: the exchange is in session and takes orders into its book.',
    }),
    next_open: Nullable(DateTime('Start of the next session, after the current one when open; null if none within 400 days.')),
    next_close: Nullable(DateTime('End of the current session when open, else of the next one; null if none within 400 days.')),
  },
  { title: 'ExchangeClock' },
);
export type ExchangeClock = Static<typeof ExchangeClock>;

export const ExchangeParams = Type.Object({ code: Type.String({ description: 'BRVM, BVMAC or GSE.' }) });

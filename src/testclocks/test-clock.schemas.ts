import { Type, type Static } from '@fastify/type-provider-typebox';

export const TestClock = Type.Object(
  {
    id: Type.String({ description: 'Prefixed `clk_`.' }),
    object: Type.Literal('test_clock'),
    name: Type.Union([Type.String(), Type.Null()]),
    frozen_time: Type.String({ format: 'date-time', description: 'The time the orders on this clock see as now.' }),
    status: Type.Union([Type.Literal('ready'), Type.Literal('advancing')], {
      description:
        '`ready` once an advance applied everything due; `advancing` only in the answer to an advance that could not finish (read the clock again to see the time it reached).',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'TestClock' },
);
export type TestClock = Static<typeof TestClock>;

export const TestClockCreate = Type.Object(
  {
    frozen_time: Type.String({ format: 'date-time', description: 'The instant the clock starts at (between 2000 and 2099).' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type TestClockCreate = Static<typeof TestClockCreate>;

export const TestClockAdvance = Type.Object(
  { frozen_time: Type.String({ format: 'date-time', description: 'The new time: after the current one, at most 2 years after it.' }) },
  { additionalProperties: false },
);
export type TestClockAdvance = Static<typeof TestClockAdvance>;

export const TestClockListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    starting_after: Type.Optional(Type.String({ description: 'A clock id: the clocks created before it.' })),
  },
  { additionalProperties: false },
);

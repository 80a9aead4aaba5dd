import { Type, type Static } from '@fastify/type-provider-typebox';
import { PageQuery, QueryObject } from '../http/schemas.js';

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

/** Paged like every list: `limit` 1 to 200 (default 50), `cursor` from X-Cursor-Next. */
export const TestClockListQuery = QueryObject({ ...PageQuery });

import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody } from '../http/schemas.js';
import { utcDay, type Clock } from '../lib/clock.js';
import type { MarketCalendar } from './calendar.js';
import { CalendarDay, CalendarQuery, ExchangeClock, ExchangeInfo, ExchangeParams } from './market.schemas.js';
import { calendarBetween, exchangeClock, exchangeOf, listExchanges } from './market.service.js';

export interface MarketRouteDeps {
  /** The calendar in memory (CalendarCache); never read from the database per request. */
  calendars: { current(): MarketCalendar };
  clock: Clock;
}

/** The exchanges, their trading calendars and clocks: public, no token needed. */
export const marketRoutes: FastifyPluginAsyncTypebox<MarketRouteDeps> = async (app, { calendars, clock }) => {
  app.get(
    '/v1/exchanges',
    {
      schema: {
        operationId: 'listExchanges',
        tags: ['Markets'],
        summary: 'List the exchanges the service routes to',
        response: { 200: Type.Object({ data: Type.Array(ExchangeInfo) }), 429: ErrorBody },
      },
    },
    async () => ({ data: listExchanges() }),
  );

  app.get(
    '/v1/exchanges/:code/calendar',
    {
      schema: {
        operationId: 'getExchangeCalendar',
        tags: ['Markets'],
        summary: "An exchange's trading days and phases between two dates (at most 366 days)",
        description:
          'Each day from `from` to `to` (both included), open or closed, with its phases in UTC. An auction held at an instant has `start` equal to `end`. Holidays and shortened days come from the calendars the operator imported.',
        params: ExchangeParams,
        querystring: CalendarQuery,
        response: { 200: Type.Object({ data: Type.Array(CalendarDay) }), 404: ErrorBody, 422: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const exchange = exchangeOf(request.params.code);
      return { data: calendarBetween(calendars.current(), exchange, request.query, utcDay(clock.now())) };
    },
  );

  app.get(
    '/v1/exchanges/:code/clock',
    {
      schema: {
        operationId: 'getExchangeClock',
        tags: ['Markets'],
        summary: "An exchange's phase now, whether it is open, and its next open and close",
        params: ExchangeParams,
        response: { 200: ExchangeClock, 404: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => exchangeClock(calendars.current(), exchangeOf(request.params.code), clock.now().getTime()),
  );
};

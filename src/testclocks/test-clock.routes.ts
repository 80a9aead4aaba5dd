import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import { pageHeaders } from '../http/schemas.js';
import { replyIdempotently } from '../idempotency/idempotent-reply.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { Database } from '../storage/schema.js';
import { TestClock, TestClockAdvance, TestClockCreate, TestClockListQuery } from './test-clock.schemas.js';
import type { TestClockService } from './test-clock.service.js';

export interface TestClockRouteDeps {
  db: Kysely<Database>;
  testClocks: TestClockService;
  idempotency: IdempotencyService;
  cursors: CursorCodec;
}

const IdParams = Type.Object({ id: Type.String() });
const Deleted = Type.Object(
  { id: Type.String(), object: Type.Literal('test_clock'), deleted: Type.Literal(true) },
  { additionalProperties: false },
);

/** Registered in sandbox deployments only: in production these paths are unknown (404). */
export const testClockRoutes: FastifyPluginAsyncTypebox<TestClockRouteDeps> = async (app, { db, testClocks, idempotency, cursors }) => {
  app.post(
    '/v1/test-clocks',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'createTestClock',
        tags: ['Sandbox'],
        summary: 'Create a test clock frozen at an instant (sandbox only)',
        description: "Orders placed with `test_clock` live on the clock's time: they execute and expire as the clock is advanced.",

        headers: IdempotencyHeaders,
        body: TestClockCreate,
        response: { 201: TestClock, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 201,
        body: await testClocks.create(trx, authOf(request).clientId, request.body),
      })),
  );

  app.get(
    '/v1/test-clocks/:id',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'getTestClock',
        tags: ['Sandbox'],
        summary: 'Read a test clock',
        params: IdParams,
        response: { 200: TestClock, ...protectedErrors(404) },
      },
    },
    async (request) => testClocks.get(db, authOf(request).clientId, request.params.id),
  );

  app.get(
    '/v1/test-clocks',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'listTestClocks',
        tags: ['Sandbox'],
        summary: 'List the test clocks, newest first',
        description:
          'Paged like every list: `limit` 1 to 200 (default 50), and `cursor` taken from X-Cursor-Next (empty on the last page).',
        querystring: TestClockListQuery,
        response: { 200: Type.Object({ data: Type.Array(TestClock) }, { headers: pageHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { cursor, limit } = request.query;
      const paging = new KeysetPaging(cursors, 'test_clocks', {});
      // Newest first: the next page continues before the position (the last clock's id).
      const before = paging.after(cursor);
      const page = await testClocks.list(db, authOf(request).clientId, { limit, ...(before === null ? {} : { before }) });
      return paging.send(reply, page.items, page.next);
    },
  );

  app.delete(
    '/v1/test-clocks/:id',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'deleteTestClock',
        tags: ['Sandbox'],
        summary: 'Delete a test clock; its open orders stay at its last time and can still be cancelled',

        params: IdParams,
        response: { 200: Deleted, ...protectedErrors(404) },
      },
    },
    async (request) => testClocks.delete(authOf(request).clientId, request.params.id),
  );

  app.post(
    '/v1/test-clocks/:id/advance',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'advanceTestClock',
        tags: ['Sandbox'],
        summary: 'Advance a test clock; answers once everything due to its orders up to the new time is applied',
        description:
          "Forward only, by at most 2 years. In time order: the executions of the clock's orders in the exchange phases crossed, and each day or gtd expiry at its close (`order.cancelled`, `cancel_reason: expired`).",

        headers: IdempotencyHeaders,
        params: IdParams,
        body: TestClockAdvance,
        response: { 200: TestClock, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(
        idempotency,
        request,
        reply,
        // The checks run with the request's record (a refusal stores nothing); the advance itself runs
        // after it commits, since it calls the partners, and answers with the clock it reached.
        async (trx) => ({
          status: 200,
          body: await testClocks.checkAdvance(trx, authOf(request).clientId, request.params.id, request.body.frozen_time),
        }),
        {
          afterCommit: async (_result, rewrite) =>
            testClocks.advance(authOf(request).clientId, request.params.id, request.body.frozen_time, (trx, clock) => rewrite(trx, clock)),
        },
      ),
  );
};

import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import type { CursorCodec } from '../http/cursor.js';
import { replyIdempotently } from '../http/idempotent.js';
import { pageHeaders } from '../http/schemas.js';
import { IdempotencyHeaders, bearerSecurity, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { Router } from '../routing/router.js';
import type { Database } from '../storage/schema.js';
import { Order, OrderListQuery, OrderRequest } from './order.schemas.js';
import type { OrderService } from './order.service.js';

export interface OrderRouteDeps {
  db: Kysely<Database>;
  orders: OrderService;
  router: Router;
  idempotency: IdempotencyService;
  cursors: CursorCodec;
}

const IdParams = Type.Object({ id: Type.String() });

export const orderRoutes: FastifyPluginAsyncTypebox<OrderRouteDeps> = async (app, { db, orders, router, idempotency, cursors }) => {
  app.post(
    '/v1/orders',
    {
      config: { scope: 'orders:write' },
      schema: {
        tags: ['Orders'],
        summary: 'Submit an order; it is checked, stored, and handed to the SGI partner',
        description:
          'The response shows `routed` when the partner took the order within the request, `created` when the hand-over is still being retried in the background, and `failed` when the partner refused it at once.',
        security: bearerSecurity,
        headers: IdempotencyHeaders,
        body: OrderRequest,
        response: { 201: Order, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(
        idempotency,
        request,
        reply,
        async (trx) => ({ status: 201, body: await orders.create(trx, authOf(request).clientId, request.body) }),
        // The hand-over happens after the order is committed, never inside its transaction; a replay
        // meanwhile gets 409, then the answer this request gave.
        { afterCommit: async (result, rewrite) => router.handOver((result.body as Order).id, (trx, order) => rewrite(trx, order)) },
      ),
  );

  app.get(
    '/v1/orders/:id',
    {
      config: { scope: 'orders:read' },
      schema: {
        tags: ['Orders'],
        summary: 'Read an order: its current state, fills included',
        security: bearerSecurity,
        params: IdParams,
        response: { 200: Order, ...protectedErrors(404) },
      },
    },
    async (request) => orders.get(db, authOf(request).clientId, request.params.id),
  );

  app.get(
    '/v1/orders',
    {
      config: { scope: 'orders:read' },
      schema: {
        tags: ['Orders'],
        summary: 'List orders, newest first',
        security: bearerSecurity,
        querystring: OrderListQuery,
        response: {
          200: Type.Object({ data: Type.Array(Order) }, { headers: { ...pageHeaders, 'x-cursor-prev': Type.String({ description: 'Cursor of the previous (newer) page; empty on the first page.' }) } }),
          ...protectedErrors(422),
        },
      },
    },
    async (request, reply) => {
      const { cursor, limit, created_gte, created_lt, ...rest } = request.query;
      const filters = { ...rest, created_gte, created_lt };
      const position = cursor === undefined ? undefined : cursors.decode(cursor, 'orders', filters);
      const page = await orders.list(
        db,
        authOf(request).clientId,
        {
          ...rest,
          ...(created_gte === undefined ? {} : { createdGte: Date.parse(created_gte) }),
          ...(created_lt === undefined ? {} : { createdLt: Date.parse(created_lt) }),
        },
        { limit, ...(position === undefined ? {} : position.direction === 'next' ? { before: position.position } : { after: position.position }) },
      );
      reply.header('x-cursor-next', page.older === null ? '' : cursors.encode('orders', filters, { position: page.older, direction: 'next' }));
      reply.header('x-cursor-prev', page.newer === null ? '' : cursors.encode('orders', filters, { position: page.newer, direction: 'prev' }));
      return { data: page.items };
    },
  );

  app.post(
    '/v1/orders/:id/cancel',
    {
      config: { scope: 'orders:write' },
      schema: {
        tags: ['Orders'],
        summary: 'Cancel an open order (a final order is 409)',
        description: 'Returns the order as it stands after asking the partner: `cancelled`, or unchanged while an unreachable partner is asked again in the background.',
        security: bearerSecurity,
        headers: IdempotencyHeaders,
        params: IdParams,
        response: { 200: Order, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(
        idempotency,
        request,
        reply,
        async (trx) => ({ status: 200, body: await orders.requestCancel(trx, authOf(request).clientId, request.params.id) }),
        { afterCommit: async (result, rewrite) => router.cancel((result.body as Order).id, (trx, order) => rewrite(trx, order)) },
      ),
  );
};

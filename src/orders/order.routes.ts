import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idempotentRequestOf, sendOutcome, serializerOf } from '../idempotency/idempotent-reply.js';
import { absentBodyIsEmpty } from '../http/json-body.js';
import { pageHeaders } from '../http/schemas.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import type { Database } from '../storage/schema.js';
import { AmendRequest, CancelRequest, Fill, Order, OrderListQuery, OrderRequest } from './order.schemas.js';
import type { OrderService } from './order.service.js';
import { amendOrder } from './use-cases/amend-order.js';
import { cancelOrder } from './use-cases/cancel-order.js';
import type { IdempotencyContext, OrderUseCaseDeps } from './use-cases/deps.js';
import { submitOrder } from './use-cases/submit-order.js';

export interface OrderRouteDeps {
  db: Kysely<Database>;
  orders: OrderService;
  /** Submit, cancel and amend: each one function of orders/use-cases/. */
  useCases: OrderUseCaseDeps;
  cursors: CursorCodec;
}

const IdParams = Type.Object({ id: Type.String() });

/** The request's Idempotency-Key context, with the route's own serialiser. */
const idempotencyOf = (request: FastifyRequest, reply: FastifyReply): IdempotencyContext => ({
  request: idempotentRequestOf(request),
  serialize: serializerOf(reply),
});

/**
 * The order routes: each parses its request, calls the service (reads) or its use case (writes), and
 * serialises the answer. Cancel and amend answer 202 with the order showing its pending request, or
 * 200 with the order as the partner left it when it answered within the request.
 */
export const orderRoutes: FastifyPluginAsyncTypebox<OrderRouteDeps> = async (app, { db, orders, useCases, cursors }) => {
  app.post(
    '/v1/orders',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'createOrder',
        tags: ['Orders'],
        summary: 'Submit an order; it is checked, stored, and handed to the SGI partner',
        description:
          'The response shows `routed` when the partner took the order within the request, `created` when the hand-over is still being retried in the background, and `failed` when the partner refused it at once.',

        headers: IdempotencyHeaders,
        body: OrderRequest,
        response: { 201: Order, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      sendOutcome(request, reply, await submitOrder(useCases, idempotencyOf(request, reply), authOf(request).clientId, request.body)),
  );

  app.get(
    '/v1/orders/:id',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'getOrder',
        tags: ['Orders'],
        summary: 'Read an order: its current state, fills included',

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
        operationId: 'listOrders',
        tags: ['Orders'],
        summary: 'List orders, newest first',

        querystring: OrderListQuery,
        response: {
          200: Type.Object(
            { data: Type.Array(Order) },
            {
              headers: {
                ...pageHeaders,
                'x-cursor-prev': Type.String({ description: 'Cursor of the previous (newer) page; empty on the first page.' }),
              },
            },
          ),
          ...protectedErrors(422),
        },
      },
    },
    async (request, reply) => {
      const { cursor, limit, created_gte, created_lt, ...rest } = request.query;
      const filters = { ...rest, created_gte, created_lt };
      const paging = new KeysetPaging(cursors, 'orders', filters);
      const page = await orders.list(
        db,
        authOf(request).clientId,
        {
          ...rest,
          ...(created_gte === undefined ? {} : { createdGte: Date.parse(created_gte) }),
          ...(created_lt === undefined ? {} : { createdLt: Date.parse(created_lt) }),
        },
        paging.range(cursor, limit),
      );
      return paging.send(reply, page.items, page.older, page.newer);
    },
  );

  app.post(
    '/v1/orders/:id/cancel',
    {
      config: { scope: 'orders:write' },
      preValidation: absentBodyIsEmpty,
      schema: {
        operationId: 'cancelOrder',
        tags: ['Orders'],
        summary: 'Cancel an open order (a final order is 409)',
        description:
          'Asks the partner to cancel what remains. The body is optional: none, an empty one and `{}` are the same request; any member is 422. 200 when the partner answered within the request: the order is `cancelled` (`cancel_reason` says why), or, if the partner refused (the order filled meanwhile), as the partner reports it with `last_refusal`. 202 when the answer comes later: the order shows `pending_request: pending_cancel`, and `order.cancelled` (or `order.request_refused`) follows.',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: CancelRequest,
        response: { 200: Order, 202: Order, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      sendOutcome(request, reply, await cancelOrder(useCases, idempotencyOf(request, reply), authOf(request).clientId, request.params.id)),
  );

  app.post(
    '/v1/orders/:id/amend',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'amendOrder',
        tags: ['Orders'],
        summary: 'Change the quantity or the limit price of an open limit order',
        description:
          'Only a limit order that is `routed` or `partially_filled`, with no other request waiting, can be amended (else 409). The new values pass the checks of a new order (the monthly cap counts the increase), the attestation of the order must still be in force (422 `not_revoked` or `not_expired` on `kyc_attestation_id`, as for a new order), and the new `qty` must be above `filled_qty` (422 `above_filled`). 200 when the partner answered within the request (the order with its new values and `order.amended`, or unchanged with `last_refusal`); 202 with `pending_request: pending_amend` and `pending_changes` when the answer comes later.',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: AmendRequest,
        response: { 200: Order, 202: Order, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      sendOutcome(
        request,
        reply,
        await amendOrder(useCases, idempotencyOf(request, reply), authOf(request).clientId, request.params.id, request.body),
      ),
  );

  app.get(
    '/v1/orders/:id/fills',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'listOrderFills',
        tags: ['Orders'],
        summary: "The order's executions, oldest first, with amounts and settlement dates",

        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(Fill) }), ...protectedErrors(404) },
      },
    },
    async (request) => ({ data: await orders.fills(db, authOf(request).clientId, request.params.id) }),
  );
};

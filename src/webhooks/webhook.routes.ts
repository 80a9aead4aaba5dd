import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import { refuseLoneSurrogates, replyIdempotently } from '../idempotency/idempotent-reply.js';
import { absentBodyIsEmpty } from '../http/json-body.js';
import { pageHeaders } from '../http/schemas.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { Database } from '../storage/schema.js';
import type { Transact } from '../storage/database.js';
import type { DeliveryService } from './delivery.service.js';
import type { PageRequest } from './endpoint.repository.js';
import type { EndpointService } from './endpoint.service.js';
import type { Page } from './mapping.js';
import {
  Delivery,
  DeliveryListQuery,
  EndpointListQuery,
  EventEnvelope,
  EventListQuery,
  ReplayDeadResponse,
  SampleEventResponse,
  SecretRotation,
  TestEventRequest,
  TestEventResponse,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointRequest,
  WebhookEndpointUpdate,
} from './webhook.schemas.js';

export interface WebhookRouteDeps {
  db: Kysely<Database>;
  /** Opens the routes' transactions (Storage.transact). */
  transact: Transact;
  endpoints: EndpointService;
  deliveries: DeliveryService;
  idempotency: IdempotencyService;
  cursors: CursorCodec;
}

const IdParams = Type.Object({ id: Type.String() });
const scope = 'webhooks:manage' as const;
const tags = ['Webhooks'];
const EmptyBody = Type.Object({}, { additionalProperties: false, description: 'Optional; when sent, an empty object.' });

/**
 * These POSTs may come without a body. Fastify validates a missing body against the schema as well,
 * so it is read as `{}` first: an empty request and `{}` are the same request (and the same
 * idempotency fingerprint).
 */
const bodyOptional = { preValidation: absentBodyIsEmpty };
const pagedHeaders = {
  ...pageHeaders,
  'x-cursor-prev': Type.String({ description: 'Cursor of the previous (newer) page; empty on the first page.' }),
};

/** One page of a two-way listing (newest first), in the keyset paging every listing uses. */
function pageOf(
  cursors: CursorCodec,
  listing: string,
  filters: Record<string, unknown>,
  cursor: string | undefined,
  limit: number,
): { paging: KeysetPaging; range: PageRequest } {
  const paging = new KeysetPaging(cursors, listing, filters);
  return { paging, range: paging.range(cursor, limit) };
}

function sendPage<T>(reply: FastifyReply, paging: KeysetPaging, page: Page<T>): { data: T[] } {
  return paging.send(reply, page.items, page.older, page.newer);
}

/** Endpoints, deliveries and dead letters (docs/webhooks.md: the spec's POST plus extensions). */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteDeps> = async (
  app,
  { db, endpoints, deliveries, idempotency, cursors, transact },
) => {
  app.post(
    '/v1/webhooks/endpoints',
    {
      config: { scope },
      schema: {
        operationId: 'createWebhookEndpoint',
        tags,
        summary: 'Register a webhook endpoint; the response shows its signing secret, this once',

        headers: IdempotencyHeaders,
        body: WebhookEndpointRequest,
        response: { 201: WebhookEndpointCreated, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(
        idempotency,
        request,
        reply,
        async (trx) => ({ status: 201, body: await endpoints.create(trx, authOf(request).clientId, request.body) }),
        {
          carriesSecret: true,
        },
      ),
  );

  app.get(
    '/v1/webhooks/endpoints',
    {
      config: { scope },
      schema: {
        operationId: 'listWebhookEndpoints',
        tags,
        summary: 'List webhook endpoints, newest first',

        querystring: EndpointListQuery,
        response: { 200: Type.Object({ data: Type.Array(WebhookEndpoint) }, { headers: pagedHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { paging, range } = pageOf(cursors, 'webhook_endpoints', {}, request.query.cursor, request.query.limit);
      return sendPage(reply, paging, await endpoints.list(db, authOf(request).clientId, range));
    },
  );

  app.get(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope },
      schema: {
        operationId: 'getWebhookEndpoint',
        tags,
        summary: 'Read a webhook endpoint (without its secret)',
        params: IdParams,
        response: { 200: WebhookEndpoint, ...protectedErrors(404) },
      },
    },
    async (request) => endpoints.get(db, authOf(request).clientId, request.params.id),
  );

  app.patch(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope },
      // Takes no Idempotency-Key, but its text is stored and sent in webhooks like a POST's.
      preHandler: refuseLoneSurrogates,
      schema: {
        operationId: 'updateWebhookEndpoint',
        tags,
        summary: "Change an endpoint's url, events, description, or disable it",

        params: IdParams,
        body: WebhookEndpointUpdate,
        response: { 200: WebhookEndpoint, ...protectedErrors(404, 422) },
      },
    },
    async (request) => transact((trx) => endpoints.update(trx, authOf(request).clientId, request.params.id, request.body)),
  );

  app.delete(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags,
        summary: 'Delete an endpoint; its pending deliveries stop',

        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...protectedErrors(404) },
      },
    },
    async (request, reply) => {
      await transact((trx) => endpoints.delete(trx, authOf(request).clientId, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/webhooks/endpoints/:id/rotate-secret',
    {
      config: { scope },
      ...bodyOptional,
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        tags,
        summary: 'Issue a new signing secret; for 24 hours deliveries carry two v1= signatures, new then old',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: EmptyBody,
        response: { 200: SecretRotation, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(
        idempotency,
        request,
        reply,
        async (trx) => ({ status: 200, body: await endpoints.rotateSecret(trx, authOf(request).clientId, request.params.id) }),
        {
          carriesSecret: true,
        },
      ),
  );

  app.post(
    '/v1/webhooks/endpoints/:id/test',
    {
      config: { scope },
      ...bodyOptional,
      schema: {
        operationId: 'sendWebhookTestEvent',
        tags,
        summary: 'Send a sample event of any type to this endpoint only',
        description:
          'The event is stored like any other (see GET /v1/events) with the livemode given, and delivered, signed, to this endpoint alone. A disabled endpoint gets no new deliveries: 409.',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: TestEventRequest,
        response: { 202: TestEventResponse, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 202,
        body: await endpoints.sendTest(trx, authOf(request).clientId, request.params.id, request.body),
      })),
  );

  app.post(
    '/v1/events/test',
    {
      config: { scope },
      ...bodyOptional,
      schema: {
        operationId: 'sendSampleEvent',
        tags,
        summary: "Store a sample event of any type as one of the client's events",
        description:
          "The sample is stored like any other event (see GET /v1/events), with the livemode given: it is delivered, signed, to each of the client's endpoints subscribed to its type, and sent on the event stream (GET /v1/events/stream), so `cauri listen` forwards it. The client needs no endpoint. `webhook.test` samples carry `endpoint_id: null`.",
        headers: IdempotencyHeaders,
        body: TestEventRequest,
        response: { 202: SampleEventResponse, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 202,
        body: await endpoints.sendSample(trx, authOf(request).clientId, request.body),
      })),
  );

  app.post(
    '/v1/webhooks/endpoints/:id/replay-dead',
    {
      config: { scope },
      ...bodyOptional,
      schema: {
        operationId: 'replayDeadDeliveries',
        tags,
        summary: 'Replay every dead delivery of an endpoint (one new attempt each)',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: EmptyBody,
        response: { 202: ReplayDeadResponse, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 202,
        body: { endpoint_id: request.params.id, replayed: await deliveries.replayDead(trx, authOf(request).clientId, request.params.id) },
      })),
  );

  app.get(
    '/v1/webhooks/deliveries',
    {
      config: { scope },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'List deliveries with their attempts, newest first; status=dead lists the dead letters',

        querystring: DeliveryListQuery,
        response: { 200: Type.Object({ data: Type.Array(Delivery) }, { headers: pagedHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { cursor, limit, endpoint_id, event_id, status } = request.query;
      const filters = { endpoint_id, event_id, status };
      const { paging, range } = pageOf(cursors, 'webhook_deliveries', filters, cursor, limit);
      const filter = {
        ...(endpoint_id === undefined ? {} : { endpointId: endpoint_id }),
        ...(event_id === undefined ? {} : { eventId: event_id }),
        ...(status === undefined ? {} : { status }),
      };
      return sendPage(reply, paging, await deliveries.list(db, authOf(request).clientId, filter, range));
    },
  );

  app.get(
    '/v1/webhooks/deliveries/:id',
    {
      config: { scope },
      schema: {
        operationId: 'getWebhookDelivery',
        tags,
        summary: 'Read a delivery and its attempts',
        params: IdParams,
        response: { 200: Delivery, ...protectedErrors(404) },
      },
    },
    async (request) => deliveries.get(db, authOf(request).clientId, request.params.id),
  );

  app.post(
    '/v1/webhooks/deliveries/:id/replay',
    {
      config: { scope },
      ...bodyOptional,
      schema: {
        operationId: 'replayWebhookDelivery',
        tags,
        summary: 'Replay a dead delivery: one new attempt, signed afresh, same event id and idempotency key (409 unless dead)',

        headers: IdempotencyHeaders,
        params: IdParams,
        body: EmptyBody,
        response: { 202: Delivery, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 202,
        body: await deliveries.replay(trx, authOf(request).clientId, request.params.id),
      })),
  );
};

/** The client's stored events (docs/webhooks.md). */
export const eventRoutes: FastifyPluginAsyncTypebox<{ db: Kysely<Database>; deliveries: DeliveryService; cursors: CursorCodec }> = async (
  app,
  { db, deliveries, cursors },
) => {
  app.get(
    '/v1/events',
    {
      config: { scope },
      schema: {
        operationId: 'listEvents',
        tags: ['Events'],
        summary: "List events, newest first (the client's own and those sent to every client)",

        querystring: EventListQuery,
        response: { 200: Type.Object({ data: Type.Array(EventEnvelope) }, { headers: pagedHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { cursor, limit, type } = request.query;
      const { paging, range } = pageOf(cursors, 'events', { type }, cursor, limit);
      return sendPage(reply, paging, await deliveries.listEvents(db, authOf(request).clientId, type, range));
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { scope },
      schema: {
        operationId: 'getEvent',
        tags: ['Events'],
        summary: 'Read an event: its envelope',
        params: IdParams,
        response: { 200: EventEnvelope, ...protectedErrors(404) },
      },
    },
    async (request) => deliveries.getEvent(db, authOf(request).clientId, request.params.id),
  );
};

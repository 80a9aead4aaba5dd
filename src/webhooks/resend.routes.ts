import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { authOf } from '../auth/authenticate.js';
import { replyIdempotently } from '../idempotency/idempotent-reply.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { Clock } from '../lib/clock.js';
import type { DialectName } from '../storage/dialect.js';
import type { DeliveryService } from './delivery.service.js';
import { EventResendService } from './resend.service.js';
import { Delivery } from './webhook.schemas.js';

export interface EventResendRouteDeps {
  dialect: DialectName;
  clock: Clock;
  idempotency: IdempotencyService;
  deliveries: DeliveryService;
}

const scope = 'webhooks:manage' as const;
const tags = ['Events'];

const ResendParams = Type.Object({ id: Type.String() });
const ResendRequest = Type.Object(
  {
    endpoint_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The endpoint to send it to (we_...); default every endpoint subscribed to the event type.',
      }),
    ),
  },
  { additionalProperties: false, title: 'EventResendRequest' },
);
const ResendResponse = Type.Object({ event_id: Type.String(), deliveries: Type.Array(Delivery) }, { title: 'EventResend' });

/** Re-sending a stored event to webhook endpoints (see resend.service.ts). */
export const eventResendRoutes: FastifyPluginAsyncTypebox<EventResendRouteDeps> = async (app, deps) => {
  const { idempotency } = deps;
  const resender = new EventResendService(deps.deliveries, deps.clock, deps.dialect);

  app.post(
    '/v1/events/:id/resend',
    {
      config: { scope },
      preValidation: async (request: { body: unknown }) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        operationId: 'resendEvent',
        tags,
        summary: 'Send a stored event again: to one endpoint, or to every endpoint subscribed to its type',
        description:
          'For each endpoint: a new delivery, due now, if it never had one; a succeeded or dead delivery is made due again (same idempotency key, its retry schedule restarted); a pending one is left on its way. ' +
          '409 while the event has not been fanned out yet (within a second of its creation), when no enabled endpoint subscribes to its type and none is named, or when the endpoint named is disabled (a disabled endpoint gets no new deliveries).',

        headers: IdempotencyHeaders,
        params: ResendParams,
        body: ResendRequest,
        response: { 202: ResendResponse, ...protectedErrors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => ({
        status: 202,
        body: await resender.resend(trx, authOf(request).clientId, request.params.id, request.body.endpoint_id),
      })),
  );
};

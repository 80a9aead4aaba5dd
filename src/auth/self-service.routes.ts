import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../lib/errors.js';
import { absentBodyIsEmpty } from '../http/json-body.js';
import { DateTime, OPTIONAL_BODY, StringEnum } from '../http/schemas.js';
import { IdempotencyHeaders, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import { replyIdempotently } from '../idempotency/idempotent-reply.js';
import type { FastifyRequest } from 'fastify';
import { authOf } from './authenticate.js';
import { PREVIOUS_SECRET_EXPIRIES, type ClientService } from './client.service.js';
import { unauthorized } from './token.service.js';

const ClientSecretRotation = Type.Object(
  {
    client_id: Type.String({ description: 'The client whose secret was rotated (cli_...)' }),
    client_secret: Type.String({
      description: 'The new client secret (sk_test_... or sk_live_...). Shown only in this response; never stored in clear.',
    }),
    previous_secret_expires_at: DateTime(
      'Every older secret of the client keeps working until then (24 hours, or now with `expire_previous: now`), then fails with 401.',
    ),
  },
  { title: 'ClientSecretRotation' },
);

const ClientSecretRotationRequest = Type.Object(
  {
    expire_previous: Type.Optional(
      StringEnum(PREVIOUS_SECRET_EXPIRIES, {
        description:
          '`in_24_hours` (default): every older secret keeps working 24 hours. `now`: every older secret fails at once (a secret that leaked).',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ClientSecretRotationRequest',
    description: 'Optional: no body is the same as `{}`.',
    ...OPTIONAL_BODY,
  },
);

export interface SelfServiceRouteDeps {
  clients: ClientService;
  idempotency: IdempotencyService;
}

/**
 * Rotating the secret mints full credentials, so the token must carry every scope the client is
 * allowed (a token narrowed to fewer cannot): 403 otherwise.
 */
async function everyScopeOfTheClient(clients: ClientService, request: FastifyRequest): Promise<void> {
  const grant = authOf(request);
  const client = await clients.get(grant.clientId);
  if (client === undefined) throw unauthorized('Client is disabled');
  const missing = client.scopes.find((s) => !grant.scopes.has(s));
  if (missing !== undefined) {
    // The message has the form of every missing scope; WWW-Authenticate lists every scope it needs.
    throw new ApiError('forbidden', `Missing scope: ${missing}`, {
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${client.scopes.join(' ')}"` },
    });
  }
}

/**
 * What a client can do for itself with its own access token (docs/concepts.md: "a client can rotate
 * its own secret from the dashboard"). The route needs no particular scope (`config.bearer`): the
 * authentication hook verifies the token with the same rules as on a scoped route (valid token,
 * client still active) and counts the request against the client's rate limit, before anything else.
 */
export const selfServiceRoutes: FastifyPluginAsyncTypebox<SelfServiceRouteDeps> = async (app, { clients, idempotency }) => {
  app.post(
    '/v1/auth/rotate-secret',
    {
      // The token was verified, and the request counted against its client, by the authentication
      // hook (config.bearer); the scopes are checked here, before the body is read.
      preParsing: (request, _reply, payload, done) => {
        everyScopeOfTheClient(clients, request).then(() => done(null, payload), done);
      },
      preValidation: absentBodyIsEmpty,
      config: { bearer: true },
      schema: {
        operationId: 'rotateClientSecret',
        tags: ['Authentication'],
        summary: "Rotate the calling client's own secret; the previous one keeps working for 24 hours, or stops at once",
        description:
          "Authenticated with the client's bearer token, which must carry every scope the client is allowed (a narrowed token cannot " +
          'mint full credentials). Requires an Idempotency-Key (a UUID): a retry with the same key and body within 24 hours returns ' +
          'the same new secret (with `Idempotent-Replayed: true`) and rotates nothing again. Client secrets are stored only as keyed ' +
          'hashes; the copy of this response kept for replays is sealed under a key derived from the master key, never in clear. ' +
          'Every earlier secret keeps working for 24 hours; with `expire_previous: now` every earlier secret fails at once (a secret ' +
          'that leaked), while access tokens already issued keep working until they expire (at most 15 minutes).',

        headers: IdempotencyHeaders,
        body: ClientSecretRotationRequest,
        response: { 200: ClientSecretRotation, ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const grant = authOf(request);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return replyIdempotently(
        idempotency,
        request,
        reply,
        async (trx) => {
          const rotated = await clients.rotateSecretIn(trx, grant.clientId, request.body.expire_previous);
          if (rotated === null) throw unauthorized('Client is disabled');
          const body = {
            client_id: rotated.client_id,
            client_secret: rotated.client_secret,
            previous_secret_expires_at: rotated.previous_secret_expires_at,
          };
          return { status: 200, body };
        },
        { carriesSecret: true },
      );
    },
  );
};

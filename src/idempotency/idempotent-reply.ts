import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler, preValidationHookHandler, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { originOfTrace, withEventOrigin, type EventOrigin } from '../events/origin.js';
import { ApiError, validationError } from '../lib/errors.js';
import type { ClientId } from '../lib/ids.js';
import { requestTrace } from '../lib/trace-context.js';
import { unstorableTextDetail } from '../lib/unicode.js';
import type { Database } from '../storage/schema.js';
import {
  IdempotencyService,
  type IdempotentOutcome,
  type IdempotentRequest,
  type Rewrite,
  type WorkResult,
} from './idempotency.service.js';

export type { Rewrite } from './idempotency.service.js';

export interface IdempotentReplyOptions {
  /**
   * Work that must not hold the transaction (calling a partner), run once after the first run
   * commits and before it answers. It may answer with a newer body (and status) by calling `rewrite`
   * in the transaction of the change that body reports. Replays get 409 until it has finished.
   */
  afterCommit?: (result: WorkResult, rewrite: Rewrite) => Promise<unknown>;
  /** The response shows a secret once (a signing secret): its copy kept for replays is sealed. */
  carriesSecret?: boolean;
}

/**
 * Runs a mutating POST under its Idempotency-Key and sends the response. The body is serialised by the
 * route's own response schema, stored, and sent as bytes, so a replay is byte-for-byte the first
 * response (plus `Idempotent-Replayed: true`).
 */
export async function replyIdempotently(
  idempotency: IdempotencyService,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (trx: Kysely<Database>) => Promise<WorkResult>,
  options: IdempotentReplyOptions = {},
): Promise<FastifyReply> {
  const { afterCommit } = options;
  const idempotent = idempotentRequestOf(request, options);
  const outcome = await idempotency.run(
    idempotent,
    serializerOf(reply),
    (trx) => withEventOrigin(trx, idempotent.origin, () => work(trx)),
    afterCommit === undefined ? undefined : async (result, rewrite) => void (await afterCommit(result, rewrite)),
  );
  return sendOutcome(request, reply, outcome);
}

/**
 * The client a protected request was authenticated as: the grant that src/auth/authenticate.ts
 * verified and set on the request before any handler runs.
 */
function callerOf(request: FastifyRequest): ClientId {
  if (request.auth === null) throw new ApiError('unauthorized', 'Authentication required');
  return request.auth.clientId;
}

/** What identifies the request under its key: the client, the key, and the route, params and body. */
export function idempotentRequestOf(request: FastifyRequest, options: { carriesSecret?: boolean } = {}): IdempotentRequest {
  const header = request.headers['idempotency-key'];
  return {
    clientId: callerOf(request),
    key: Array.isArray(header) ? header[0] : header,
    // Fastify's params object has a null prototype; a plain copy is what the canonical form takes.
    fingerprint: {
      method: request.method,
      route: request.routeOptions.url,
      params: { ...(request.params as object) },
      body: request.body ?? null,
    },
    sealResponse: options.carriesSecret === true,
    origin: eventOriginOf(request),
  };
}

/** The request's ids and trace, as the events it records keep them (X-Request-Id and traceparent as it came). */
export function eventOriginOf(request: FastifyRequest): EventOrigin {
  return originOfTrace(requestTrace(request.id, request.headers));
}

/** The route's serialiser for each status of its response schema: the bytes sent are the bytes stored. */
export function serializerOf(reply: FastifyReply): (result: WorkResult) => string {
  return (result) => String(reply.code(result.status).serialize(result.body));
}

/** Sends an idempotent outcome as its stored bytes, logging a settled key or a failed follow-up. */
export function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: IdempotentOutcome): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  if (outcome.settled === true) {
    request.log.warn(
      { idempotency_key: request.headers['idempotency-key'] },
      'the request holding this Idempotency-Key outlived its lease; the response it committed is now final',
    );
  }
  if (outcome.followUpError !== undefined) {
    request.log.error({ err: outcome.followUpError }, 'work after the commit failed; the response committed with the request is sent');
  }
  return reply.code(outcome.status).type('application/json; charset=utf-8').send(Buffer.from(outcome.body));
}

/**
 * Refuses a body holding a lone UTF-16 surrogate (JSON allows `"\udfff"`; Unicode text does not) with
 * 422 rule `unicode`, or the character U+0000 (`"\u0000"`, which PostgreSQL cannot store in text) with
 * 422 rule `nul_character`, naming the field. A lone surrogate can be neither fingerprinted nor
 * signed in RFC 8785 form, stored as sent, nor delivered in a webhook as UTF-8. Nothing has run yet,
 * so nothing is stored and a retry with the same key gets the same answer.
 */
export const refuseLoneSurrogates: preHandlerHookHandler = (request, _reply, done) => {
  const detail = unstorableTextDetail(request.body);
  if (detail === null) return done();
  done(
    validationError(
      [detail],
      detail.rule === 'unicode'
        ? `Invalid ${detail.field}: text must be valid Unicode (it holds a lone surrogate)`
        : `Invalid ${detail.field}: text may not hold the character U+0000`,
    ),
  );
};

/**
 * Refuses a missing or malformed Idempotency-Key (422 naming `Idempotency-Key`) before the body is
 * validated, so that the key's error is the one reported whatever the body holds: a client that
 * forgot the key learns it first.
 */
export const requireIdempotencyKey: preValidationHookHandler = (request, _reply, done) => {
  const header = request.headers['idempotency-key'];
  try {
    IdempotencyService.checkKey(Array.isArray(header) ? header.join(', ') : header);
  } catch (error) {
    return done(error as Error);
  }
  done();
};

function takesIdempotencyKey(route: RouteOptions): boolean {
  const headers = route.schema?.headers as { properties?: Record<string, unknown> } | undefined;
  return headers?.properties?.['idempotency-key'] !== undefined;
}

/**
 * Installs, on every route registered after this call that takes an Idempotency-Key, the check of
 * the key before the body's validation and the refusal of lone surrogates before its handler: once
 * for all of them, present and future.
 */
export function guardIdempotentRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!takesIdempotencyKey(route)) return;
    const validation = route.preValidation as unknown;
    route.preValidation = [
      requireIdempotencyKey,
      ...(validation === undefined ? [] : [validation].flat()),
    ] as RouteOptions['preValidation'];
    const existing = route.preHandler as unknown;
    route.preHandler = [...(existing === undefined ? [] : [existing].flat()), refuseLoneSurrogates] as RouteOptions['preHandler'];
  });
}

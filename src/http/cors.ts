import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '../lib/errors.js';

/**
 * Cross-origin requests from browsers (the Fetch standard's CORS protocol), in two policies:
 *
 * - the **public documents**, every GET that needs no token under `/v1/` and `/.well-known/` (the key
 *   document, the token keys, the revocation list, the OpenAPI description, partners, exchanges and
 *   their calendars, instruments), are readable from any origin: `Access-Control-Allow-Origin: *` on
 *   every response, whatever the request, so that a shared cache never serves a copy without it;
 * - the rest of the API (the token endpoint and every authenticated route) answers only the origins
 *   the operator lists (CAURI_CORS_ORIGINS), or any origin with `*`, and no origin by default.
 *
 * Credentials are never allowed: the API authenticates with bearer tokens, not cookies, so a page
 * sends its token in `Authorization` itself. Preflights (OPTIONS) are answered here, before the
 * rate limit and the token check, which a browser's preflight could not pass (it carries neither).
 * They are not counted; the rate limiter's onSend hook gives them the X-RateLimit headers of the
 * caller's address as it stands (src/auth/authenticate.ts).
 */

/** Response headers a page may read, beyond the ones every browser exposes (Content-Type, Cache-Control, ...). */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Cursor-Next',
  'X-Cursor-Prev',
  'Link',
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Idempotent-Replayed',
  'WWW-Authenticate',
].join(', ');

/** Request headers a page may send, beyond the ones every browser allows. */
export const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-None-Match',
  'Last-Event-ID',
  'X-Request-Id',
  'traceparent',
  'tracestate',
].join(', ');

const DOCUMENT_METHODS = ['GET', 'HEAD'];
const API_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'];
/** How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at two hours). */
export const PREFLIGHT_MAX_AGE = 600;

function isApiPath(url: string): boolean {
  return url.startsWith('/v1/') || url.startsWith('/.well-known/');
}

/** A route of the public documents: read with GET (or its HEAD), no token, under the API's paths. */
export function isPublicDocument(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): boolean {
  const methods = [route.method].flat();
  return methods.every((m) => m === 'GET' || m === 'HEAD') && route.config?.scope === undefined && isApiPath(route.url);
}

/** The paths a route template matches (`/v1/sgi/partners/:id`), as a regular expression. */
function templatePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

function addOnRequest(route: RouteOptions, hook: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void): void {
  const existing = route.onRequest as unknown;
  route.onRequest = (existing === undefined ? [hook] : [...[existing].flat(), hook]) as RouteOptions['onRequest'];
}

/**
 * Installs both policies and the preflight answer on `app`. It must run before the routes are
 * registered (each route gets its hook when it is), and before the hooks that check tokens and rate
 * limits, so that a preflight is answered first.
 */
export function installCors(app: FastifyInstance, origins: readonly string[] | '*'): void {
  const allowed = origins === '*' ? null : new Set(origins);
  const originAllowed = (origin: string) => allowed === null || allowed.has(origin);
  const documents: RegExp[] = [];

  app.addHook('onRoute', (route) => {
    if (isPublicDocument(route)) {
      documents.push(templatePattern(route.url));
      addOnRequest(route, (_request, reply, done) => {
        reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS);
        done();
      });
      return;
    }
    if (!isApiPath(route.url) || (allowed !== null && allowed.size === 0)) return;
    addOnRequest(route, (request, reply, done) => {
      apiPolicy(request, reply);
      done();
    });
  });

  /** The API's policy on one answer: the allowed origin named (any with `*`), varied on Origin. */
  const apiPolicy = (request: FastifyRequest, reply: FastifyReply): void => {
    if (allowed === null) {
      reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS);
      return;
    }
    if (allowed.size === 0) return;
    // The answer depends on Origin: a shared cache keeps one copy per origin.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin !== undefined && allowed.has(origin)) {
      reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS);
    }
  };

  // No route answers OPTIONS: a preflight reaches the not-found context, whose hooks run too.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'OPTIONS') {
      // A path under the API that no route serves (a mistyped path, or a method the path does not
      // take) answers 404 under the API's policy, so that a page whose preflight passed reads it.
      if (request.is404 && isApiPath(request.url)) apiPolicy(request, reply);
      return done();
    }
    const origin = request.headers.origin;
    const method = request.headers['access-control-request-method'];
    if (origin === undefined || typeof method !== 'string') return done();
    const path = request.url.split('?', 1)[0] as string;
    if (documents.some((pattern) => pattern.test(path)) && DOCUMENT_METHODS.includes(method)) {
      preflight(reply, '*', DOCUMENT_METHODS);
      return;
    }
    if (isApiPath(path) && originAllowed(origin) && API_METHODS.includes(method)) {
      if (allowed !== null) reply.header('vary', 'Origin');
      preflight(reply, allowed === null ? '*' : origin, API_METHODS);
      return;
    }
    done(new ApiError('forbidden', `Cross-origin ${method} ${path} is not allowed from ${origin}`));
  });
}

function preflight(reply: FastifyReply, allowOrigin: string, methods: string[]): void {
  void reply
    .code(204)
    .header('access-control-allow-origin', allowOrigin)
    .header('access-control-allow-methods', methods.join(', '))
    .header('access-control-allow-headers', ALLOWED_HEADERS)
    .header('access-control-max-age', String(PREFLIGHT_MAX_AGE))
    .send();
}

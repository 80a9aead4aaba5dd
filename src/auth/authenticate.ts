import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { ApiError } from '../lib/errors.js';
import { addRouteHook, onUnroutedRequest, registeredRoutes } from '../http/app.js';
import { isRateLimitedPath, type RateLimiter } from '../http/rate-limit.js';
import { CommittedCache } from '../storage/committed-cache.js';
import type { Database } from '../storage/schema.js';
import { clientState, type ClientState } from './client.repository.js';
import { clientAcceptsToken, tokenRefusal } from './client.service.js';
import type { Scope } from './scopes.js';
import { bearerTokenOf, unauthorized, type AccessToken, type TokenService } from './token.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route requires; routes without it are public. */
    scope?: Scope;
    /**
     * A route that needs a bearer token but no particular scope (the client's own secret rotation):
     * the token is verified and counted against its client before anything else of the request is
     * read, as on a scoped route; the route checks what more it needs of `request.auth` itself, in a
     * `preParsing` hook so that its 403 also comes before the body's 415, 413 and 422.
     */
    bearer?: true;
  }
  interface FastifyRequest {
    /** The verified access token of a protected route; null on public routes. */
    auth: AccessToken | null;
  }
}

/**
 * Client states (status, last disabling), kept only while nothing has been committed (see
 * CommittedCache): on SQLite a `cauri clients disable` in another process changes the marker too, so
 * disabling still takes effect at once. On PostgreSQL every check reads the database.
 */
class ClientStateCache {
  readonly #states: CommittedCache<string, ClientState | undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    changeMarker: () => number | null,
  ) {
    this.#states = new CommittedCache(changeMarker);
  }

  /** True when the grant's client is known to accept it now, without reading the database; false when unknown. */
  knownToAccept(grant: AccessToken): boolean {
    return clientAcceptsToken(this.#states.peek(grant.clientId), grant.iat);
  }

  async state(clientId: string): Promise<ClientState | undefined> {
    return this.#states.get(clientId, () => clientState(this.db, clientId));
  }
}

const BEARER_PREFIX = 'Bearer ';

/**
 * A hook on every API route: a protected route verifies its bearer token, counts the request against
 * the client's rate limit, then checks the scope (401, then 429, then 403), all before the request's
 * headers, query and body are validated or even read (415, 413, 422 come after). Public API routes and
 * unknown paths are limited per client address. It must be installed before the API routes are
 * registered (it refuses otherwise), since each route gets its hook at registration. Whether the
 * client still accepts the token (enabled, and not disabled since the token was issued) is checked on
 * every request, so disabling one takes effect at once on every process sharing the database.
 *
 * The common case (a token verified before, a client status known to be current, a rate-limit store
 * in memory) completes synchronously, without a promise; anything else takes the asynchronous path,
 * which gives the same answers.
 */
export function installAuthentication(
  app: FastifyInstance,
  deps: { db: Kysely<Database>; changeMarker: () => number | null; tokens: TokenService; limiter: RateLimiter },
): void {
  const { tokens, limiter } = deps;
  const states = new ClientStateCache(deps.db, deps.changeMarker);

  /** `scope` null: a bearer route (`config.bearer`), which checks what it needs of the grant itself. */
  const checkScope = (request: FastifyRequest, grant: AccessToken, scope: Scope | null): void => {
    if (scope !== null && !grant.scopes.has(scope)) {
      throw new ApiError('forbidden', `Missing scope: ${scope}`, {
        headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      });
    }
    request.auth = grant;
  };

  const authenticate = async (request: FastifyRequest, reply: FastifyReply, scope: Scope | null): Promise<void> => {
    let grant: AccessToken;
    try {
      grant = await tokens.verify(bearerTokenOf(request.headers.authorization));
      const refusal = tokenRefusal(await states.state(grant.clientId), grant.iat);
      if (refusal !== null) throw unauthorized(refusal);
    } catch (error) {
      await limiter.enforce(reply, `ip:${request.ip}`);
      throw error;
    }
    await limiter.enforce(reply, `cli:${grant.clientId}`);
    checkScope(request, grant, scope);
  };

  const limitByAddress = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    limiter.enforce(reply, `ip:${request.ip}`).then(() => done(), done);
  };

  if (registeredRoutes(app).some((route) => isRateLimitedPath(route.url))) {
    throw new Error('installAuthentication must run before any API route is registered: each route gets its check when it is registered');
  }
  app.decorateRequest('auth', null);
  // Each route gets its own hook, made when it is registered, with its scope and path known in
  // advance (reading request.routeOptions builds a new object on every request).
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope ?? (route.config?.bearer === true ? null : undefined);
    if (scope === undefined) {
      if (isRateLimitedPath(route.url)) addRouteHook(route, 'onRequest', limitByAddress);
      return;
    }
    addRouteHook(route, 'onRequest', (request, reply, done) => {
      // A client's own data, and secrets shown once: no browser or shared cache may keep a copy
      // (RFC 9111 §5.2.2.5). Set first, so the 401, 403 and 429 answers carry it too.
      reply.header('cache-control', 'no-store');
      const header = request.headers.authorization;
      const grant = header?.startsWith(BEARER_PREFIX) ? tokens.cached(header.slice(BEARER_PREFIX.length)) : undefined;
      if (grant !== undefined && states.knownToAccept(grant) && limiter.enforceNow(reply, `cli:${grant.clientId}`)) {
        // A sync throw here (429, 403) is caught by Fastify's hook runner and answered as an error.
        checkScope(request, grant, scope);
        done();
        return;
      }
      authenticate(request, reply, scope).then(() => done(), done);
    });
  });
  // Unknown paths have no route of their own; those under the API are limited per client address.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 && isRateLimitedPath(request.url)) limitByAddress(request, reply, done);
    else done();
  });
  // So are the paths Fastify cannot route at all (a malformed percent-encoding), answered 404 without hooks.
  onUnroutedRequest(app, (request, reply, done) => {
    if (isRateLimitedPath(request.url)) limitByAddress(request, reply, done);
    else done();
  });
  // A response sent before any of these hooks counted its request carries the headers all the same:
  // a CORS preflight, answered (or refused) first. A browser sends one by itself before a request,
  // so it is not counted: its headers say where the caller's address stands, as the request they
  // precede would see them before being counted. (A request with a token counts against its client.)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.hasHeader('x-ratelimit-limit') || !isRateLimitedPath(request.url)) return done(null, payload);
    limiter.report(reply, `ip:${request.ip}`).then(
      () => done(null, payload),
      (error: unknown) => {
        request.log.warn({ err: error }, 'rate limit state unavailable for the response headers');
        done(null, payload);
      },
    );
  });
}

/** The authenticated grant of a protected route's request. */
export function authOf(request: FastifyRequest): AccessToken {
  if (request.auth === null) throw new ApiError('unauthorized', 'Authentication required');
  return request.auth;
}

import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyHttpOptions,
  type FastifyReply,
  type FastifyRequest,
  type onRequestHookHandler,
  type onResponseHookHandler,
  type RouteOptions,
} from 'fastify';
import type { Server } from 'node:http';
import compress from '@fastify/compress';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config/config.js';
import { ApiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { responseSerializer, routeValidator } from './compiled-schemas.js';
import { capConnections, clientErrorHandler, timeoutOptions } from './connections.js';
import { installCors } from './cors.js';
import { docsCsp } from './docs-csp.js';
import { Drain } from './drain.js';
import { sendError } from './errors.js';
import { installCompressedEtags, installEtags } from './etag.js';
import { installJsonBodyParser } from './json-body.js';
import { installPageLinks } from './link.js';
import type { Metrics } from './metrics.js';
import { routeFacts, swaggerOptions, type RouteFacts, type WebhooksSection } from './openapi.js';
import { requestLoggerFactory } from './request-logger.js';
import { serializeRequest } from './log-redaction.js';

export type App = FastifyInstance;

export const BODY_LIMIT = 64 * 1024;
/** Responses smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD = 1024;

export interface RouteInfo {
  method: string;
  url: string;
}

const ROUTES = new WeakMap<object, RouteInfo[]>();
const UNROUTED = new WeakMap<object, onRequestHookHandler>();

/**
 * The hook that runs before the answer to a request Fastify cannot route (see `answerUnrouted`); the
 * rate limiter installs it, so that the answer is counted and carries the X-RateLimit headers.
 */
export function onUnroutedRequest(app: App, hook: onRequestHookHandler): void {
  UNROUTED.set(app, hook);
}

/**
 * A path Fastify's router cannot take (a malformed percent-encoding such as `%E0%A4%A`, or a path
 * parameter over `maxParamLength`) names no route: 404 `not_found` with the error body, as for any
 * unknown path. Fastify answers it before routing, without the hooks of the routes and of the
 * not-found handler, so the request id and the rate limit's hook are applied here.
 */
function answerUnrouted(frameworkError: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
  const path = (request.raw.url ?? '').split('?', 1)[0];
  const unrouted = frameworkError.code === 'FST_ERR_BAD_URL' || frameworkError.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const answer = (error?: Error) => {
    sendError(request, reply, error ?? (unrouted ? new ApiError('not_found', `No route ${request.method} ${path}`) : frameworkError));
  };
  const hook = UNROUTED.get(request.server);
  if (hook === undefined) answer();
  else void hook.call(request.server, request, reply, answer);
}

/** An error from reading the request body (its media type, size, bytes or JSON syntax). */
function isBodyError(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === 'validation_error' && error.details?.[0]?.field === 'body';
  const code = (error as { code?: unknown }).code;
  return error instanceof SyntaxError || (typeof code === 'string' && code.startsWith('FST_ERR_CTP_'));
}

/** Every route registered on `app` (for the OpenAPI completeness check and the route listing). */
export function registeredRoutes(app: App): readonly RouteInfo[] {
  return ROUTES.get(app) ?? [];
}

/**
 * Appends a hook to one route's own hooks, from an `onRoute` hook. A route's hooks are resolved once,
 * when it is registered, so the hook can close over what it needs of the route (its template, its
 * config) instead of reading `request.routeOptions`, which builds a new object on every call.
 */
export function addRouteHook(route: RouteOptions, name: 'onRequest', hook: onRequestHookHandler): void;
export function addRouteHook(route: RouteOptions, name: 'onResponse', hook: onResponseHookHandler): void;
export function addRouteHook(
  route: RouteOptions,
  name: 'onRequest' | 'onResponse',
  hook: onRequestHookHandler | onResponseHookHandler,
): void {
  const existing = route[name] as unknown;
  (route as unknown as Record<string, unknown>)[name] = existing === undefined ? [hook] : [...[existing].flat(), hook];
}

/** The query string of an API route that takes no parameters: none is accepted. */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

/**
 * An API route (`/v1/...`) that declares no query parameters refuses any, with 422 naming each
 * (`rule: additionalProperties`), as the routes that declare some refuse the ones they do not: a
 * misspelt `limit` on a list that has none, or a filter the route does not have, is told to the
 * client instead of being ignored. Runs before the route's facts are read, so the OpenAPI document
 * lists the 422. The public documents under `/.well-known/` (key document, JWKS, OAuth metadata)
 * ignore query strings, as web documents do: verifiers and OAuth libraries fetch them with
 * cache-busting parameters, and a document has nothing to filter.
 */
function closeQuery(route: RouteOptions): void {
  if (!route.url.startsWith('/v1/')) return;
  const schema = (route.schema ?? {}) as { querystring?: unknown };
  if (schema.querystring === undefined) route.schema = { ...schema, querystring: NO_QUERY };
}

export function fastifyOptions(config: Config, metrics: Metrics, logger?: FastifyBaseLogger): FastifyHttpOptions<Server> {
  return {
    ...(logger === undefined
      ? {
          logger:
            config.logLevel === 'silent'
              ? false
              : {
                  level: config.logLevel,
                  base: { service: config.serviceName, mode: config.mode, pid: process.pid },
                  redact: ['req.headers.authorization', 'req.headers.cookie'],
                  serializers: { req: serializeRequest },
                },
        }
      : { loggerInstance: logger }),
    bodyLimit: BODY_LIMIT,
    // A path parameter may be a subject id: 128 characters, each `:` of it 3 when percent-encoded.
    routerOptions: { maxParamLength: 512 },
    // Request ids are ours (req_...), logged as `request_id`; a caller's own X-Request-Id is logged
    // beside it as `client_request_id` (request-logger.ts), never used in its place.
    genReqId: () => newId('request'),
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    childLoggerFactory: requestLoggerFactory,
    trustProxy: config.trustProxy,
    // Requests that arrive on an open connection while the server closes are served (with
    // `Connection: close`) rather than refused with a body of Fastify's own: the listener is closed
    // by then, so they are the last ones (see drain.ts).
    return503OnClosing: false,
    ...timeoutOptions(config.http),
    clientErrorHandler: clientErrorHandler(config.http, metrics),
    frameworkErrors: answerUnrouted,
  };
}

/**
 * The HTTP edge without routes: validation, errors, request ids, CORS, compression, validators of the
 * public documents, page links, metrics and the OpenAPI generator (docs/http.md). Route plugins are
 * registered by the caller (the composition root), each with its dependencies. `drain`: the
 * process's shutdown state, which readiness and every response follow.
 */
export async function createHttpApp(
  config: Config,
  metrics: Metrics,
  logger?: FastifyBaseLogger,
  drain: Drain = new Drain(),
  /** The OAuth scopes the OpenAPI document describes (the composition root passes the service's). */
  scopes: Readonly<Record<string, string>> = {},
  /** The document's `webhooks` section: the requests made to webhook endpoints, one per event type. */
  webhooks: WebhooksSection = {},
): Promise<App> {
  const app = Fastify(fastifyOptions(config, metrics, logger)).withTypeProvider<TypeBoxTypeProvider>();
  capConnections(app, config.http, metrics);

  const routes: RouteInfo[] = [];
  ROUTES.set(app, routes);
  // What the OpenAPI document says of each operation beyond its schemas (security, shared responses).
  const operations = new Map<string, RouteFacts>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    closeQuery(route);
    for (const [key, facts] of routeFacts(route)) operations.set(key, facts);
    const record = metrics.routeRecorder(route.url);
    addRouteHook(route, 'onResponse', (request, reply, done) => {
      record(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  });

  app.setValidatorCompiler(({ schema, httpPart }) => routeValidator(schema, httpPart));
  app.setSerializerCompiler(({ schema }) => responseSerializer(schema));
  // Only JSON is accepted (the token endpoint adds form bodies in its own scope); anything else is 415.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);

  // Callback-style hooks: they never wait, and an async function would cost a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // A JSON body (an error's echoed `value` included) is never read by a browser as anything else.
    reply.header('x-content-type-options', 'nosniff');
    if (drain.draining) reply.header('connection', 'close');
    done();
  });
  // Matched routes are counted by their own hook (above); this one counts the rest.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) metrics.recordRequest(request.method, 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  // Before the hooks of authentication and rate limits (installed by the caller), so that preflights
  // are answered first; and before every route, since each gets its hooks when registered.
  installCors(app, config.corsOrigins);
  // The tag is made from the identity body, then compression runs, then the tag names the coding.
  installEtags(app);
  await app.register(compress, { global: true, globalDecompression: false, encodings: ['br', 'gzip'], threshold: COMPRESSION_THRESHOLD });
  installCompressedEtags(app);
  installPageLinks(app, config.publicUrl);

  const noRoute = (request: FastifyRequest) => new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
  // A request to no route is 404 whatever its body: the body of an unknown route is read (and may
  // fail to parse, or be too large) before the not-found handler runs, and is nobody's to validate.
  app.setErrorHandler((error, request, reply) => sendError(request, reply, request.is404 && isBodyError(error) ? noRoute(request) : error));
  app.setNotFoundHandler((request, reply) => sendError(request, reply, noRoute(request)));

  await app.register(swagger, swaggerOptions(config, operations, scopes, webhooks));
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, validatorUrl: null },
    staticCSP: docsCsp(config.publicUrl),
  });
  return app;
}

import type { RouteOptions } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../config/config.js';
import { isPublicDocument } from './cors.js';
import { ALWAYS_SENT, ERROR_DESCRIPTIONS, HEADER_NAMES, HEADERS, IDEMPOTENCY_KEY, SUCCESS_DESCRIPTIONS } from './openapi-parts.js';
import { documentOptionalBodies } from './json-body.js';
import { isRateLimitedPath } from './rate-limit.js';

/**
 * The OpenAPI document: the generator (@fastify/swagger) writes each route's schemas; this module adds
 * what every route shares, from what the route declares and does, so that a new route is described
 * completely by declaring its schemas, its `operationId` and its scope (docs/api-conventions.md):
 *
 * - security from the route's `config.scope` (none on public routes; a token without a particular
 *   scope for `config.bearer`), as an OAuth 2.0 client credentials scheme and as a bearer token;
 * - the error responses every route of its kind can give (401 and 403 on protected routes, 429 on
 *   rate-limited ones, 413, 415 and 422 where a body is read or parameters are validated, 409 under an
 *   Idempotency-Key, 408, 500 and 503 everywhere), each with the Error schema;
 * - the response headers the service sends (X-Request-Id, the X-RateLimit headers, Retry-After,
 *   Idempotent-Replayed, WWW-Authenticate), and the Idempotency-Key header as the service requires it;
 * - named schemas: every schema with a `title` becomes `components.schemas[title]`, referenced
 *   where it is used, so that generated clients have a named type for it.
 */

/** What the document needs of a route beyond its schema: collected when the route is registered. */
export interface RouteFacts {
  /** The scope the route requires; undefined on a public route. */
  scope: string | undefined;
  /** Needs a bearer token: for a scope, or for no particular scope (`config.bearer`). */
  bearer: boolean;
  /** Counted by the rate limiter (API paths), so it carries the X-RateLimit headers and may answer 429. */
  rateLimited: boolean;
  /** Runs under an Idempotency-Key (a mutating POST). */
  idempotent: boolean;
  /** Reads a body (413, 415 and 422 possible): a declared one, and any sent with a method but GET or HEAD. */
  hasBody: boolean;
  /** Validates path, query or header parameters (422 possible). */
  hasParameters: boolean;
  /** A public document: its 200 carries an ETag, and If-None-Match naming it gets an empty 304 (etag.ts). */
  tagged: boolean;
}

/** The document's `webhooks` member: a Path Item with a `post` operation for each event type. */
export type WebhooksSection = Record<string, { post: Record<string, unknown> }>;

/** The key of an operation: lower-case method and OpenAPI path (`get /v1/orders/{id}`). */
export function operationKey(method: string, url: string): string {
  return `${method.toLowerCase()} ${url.replace(/:(\w+)/g, '{$1}')}`;
}

/** The facts of a route, from its options, for each of its methods. */
export function routeFacts(route: RouteOptions): Array<[string, RouteFacts]> {
  const schema = (route.schema ?? {}) as {
    body?: unknown;
    params?: unknown;
    querystring?: unknown;
    headers?: { properties?: Record<string, unknown> };
  };
  const facts: RouteFacts = {
    scope: route.config?.scope,
    bearer: route.config?.scope !== undefined || route.config?.bearer === true,
    rateLimited: isRateLimitedPath(route.url),
    idempotent: schema.headers?.properties?.['idempotency-key'] !== undefined,
    hasBody: schema.body !== undefined,
    hasParameters: schema.params !== undefined || schema.querystring !== undefined || schema.headers !== undefined,
    tagged: isPublicDocument(route),
  };
  return [route.method]
    .flat()
    .map((method) => [operationKey(method, route.url), { ...facts, hasBody: facts.hasBody || (method !== 'GET' && method !== 'HEAD') }]);
}

/**
 * The generator's options: the document's head (info, servers, security schemes) and its finishing.
 * `scopes`: each OAuth scope a route may require, with what it grants (src/auth/scopes.ts);
 * `webhooks`: the requests the service makes to webhook endpoints, one per event type.
 */
export function swaggerOptions(
  config: Config,
  facts: ReadonlyMap<string, RouteFacts>,
  scopes: Readonly<Record<string, string>>,
  webhooks: WebhooksSection,
): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: `${config.serviceName} brokerage order routing and portable KYC attestation API`,
        version: '1.4.0',
        description:
          "Routes investors' orders to approved SGI partners and issues KYC attestations verifiable offline. " +
          `Access tokens come from the OAuth 2.0 client credentials grant at \`POST /v1/auth/token\`; the authorization server metadata (RFC 8414) is at \`${authorizationServerMetadataPath(config.publicUrl)}\`. ` +
          'Operation ids are stable: they are kept across versions of this description.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: config.publicUrl }],
      // Plain JSON built from the TypeBox schemas: the generator's OpenAPI types cannot see its shape.
      ...(Object.keys(webhooks).length === 0 ? {} : { webhooks: webhooks as never }),
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description:
              'OAuth 2.0 client credentials: the client id and secret (HTTP Basic or in the body) for an access token of 15 minutes.',
            flows: { clientCredentials: { tokenUrl: `${config.publicUrl}/v1/auth/token`, scopes: { ...scopes } } },
          },
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'An access token from `POST /v1/auth/token`, with the scope the operation names.',
          },
        },
      },
    },
    transformObject: (document) =>
      finishDocument(('openapiObject' in document ? document.openapiObject : document.swaggerObject) as OpenApiDocument, facts),
  };
}

/**
 * Where RFC 8414 §3 puts the metadata of an issuer: `/.well-known/oauth-authorization-server`,
 * followed by the issuer's path when it has one.
 */
export function authorizationServerMetadataPath(issuer: string): string {
  const path = new URL(issuer).pathname.replace(/\/+$/, '');
  return `/.well-known/oauth-authorization-server${path}`;
}

type Json = Record<string, unknown>;

interface OpenApiResponse {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

interface OpenApiOperation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in?: string; name?: string; schema?: unknown; $ref?: string }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, OpenApiResponse>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas?: Record<string, unknown>;
    headers?: Record<string, unknown>;
    parameters?: Record<string, unknown>;
    [other: string]: unknown;
  };
  [other: string]: unknown;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The generated document, completed: see the comment at the top of this module. */
export function finishDocument(document: OpenApiDocument, facts: ReadonlyMap<string, RouteFacts>): OpenApiDocument {
  documentOptionalBodies(document);
  const namer = new SchemaNamer(document.components.schemas ?? {});
  const headersUsed = new Set<string>();
  let idempotencyKeyUsed = false;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      nameOperationSchemas(operation, namer);
      const fact = facts.get(`${method} ${path}`);
      if (fact === undefined) continue;
      const scopes = fact.scope === undefined ? [] : [fact.scope];
      operation.security = fact.bearer ? [{ oauth2: scopes }, { bearerAuth: scopes }] : [];
      if (fact.idempotent) {
        operation.parameters = (operation.parameters ?? []).filter(
          (p) => !(p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key'),
        );
        operation.parameters.unshift({ $ref: '#/components/parameters/IdempotencyKey' });
        idempotencyKeyUsed = true;
      }
      describeResponses(operation, fact, headersUsed);
    }
  }
  for (const item of Object.values((document.webhooks ?? {}) as Record<string, Record<string, OpenApiOperation>>))
    for (const operation of Object.values(item)) nameOperationSchemas(operation, namer);
  document.components.schemas = sortedByKey(namer.schemas);
  document.components.headers = Object.fromEntries([...headersUsed].sort().map((name) => [name, HEADERS[name]]));
  if (idempotencyKeyUsed) document.components.parameters = { ...document.components.parameters, IdempotencyKey: IDEMPOTENCY_KEY };
  return document;
}

function describeResponses(operation: OpenApiOperation, fact: RouteFacts, headersUsed: Set<string>): void {
  const responses = (operation.responses ??= {});
  const errors = ['408', '500', '503'];
  if (fact.bearer) errors.push('401', '403');
  if (fact.rateLimited) errors.push('429');
  if (fact.hasBody) errors.push('413', '415', '422');
  if (fact.hasParameters || fact.idempotent) errors.push('422');
  if (fact.idempotent) errors.push('409');
  // A route's own response for one of these statuses (readiness's 503) keeps its own headers.
  const shared = new Set(errors.filter((status) => responses[status] === undefined));
  for (const status of errors) responses[status] ??= { content: { 'application/json': { schema: ERROR_REF } } };
  if (fact.tagged) responses['304'] ??= { description: 'Not modified: `If-None-Match` names the current ETag; no body.' };

  const header = (response: OpenApiResponse, name: string) => {
    headersUsed.add(name);
    (response.headers ??= {})[HEADER_NAMES[name] ?? name] = { $ref: `#/components/headers/${name}` };
  };
  for (const status of Object.keys(responses).sort()) {
    const response = responses[status] as OpenApiResponse;
    const generic = response.description === undefined || response.description === 'Default Response';
    if (generic) response.description = ERROR_DESCRIPTIONS[status] ?? SUCCESS_DESCRIPTIONS[status] ?? 'Response';
    // Route-declared headers keep their place; the shared ones follow.
    response.headers = canonicalHeaderNames(response.headers);
    for (const name of ALWAYS_SENT) if (isObject(response.headers[name])) (response.headers[name] as Json).required = true;
    header(response, 'X-Request-Id');
    if (fact.rateLimited) for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) header(response, name);
    if (status === '429' || (status === '503' && shared.has(status))) header(response, 'Retry-After');
    if (status === '409' && fact.idempotent) header(response, 'Retry-After-Conflict');
    if ((status === '401' || status === '403') && fact.bearer) header(response, 'WWW-Authenticate');
    if (fact.idempotent && status.startsWith('2')) header(response, 'Idempotent-Replayed');
    if (fact.tagged && (status === '200' || status === '304')) header(response, 'ETag');
  }
}

/** Header names as HTTP writes them (`X-Cursor-Next`), whatever case the route used. */
function canonicalHeaderNames(headers: Record<string, unknown> | undefined): Record<string, unknown> {
  const special: Record<string, string> = { etag: 'ETag', 'www-authenticate': 'WWW-Authenticate', 'x-request-id': 'X-Request-Id' };
  const name = (raw: string) =>
    special[raw.toLowerCase()] ?? raw.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
  return Object.fromEntries(Object.entries(headers ?? {}).map(([key, value]) => [name(key), value]));
}

function nameOperationSchemas(operation: OpenApiOperation, namer: SchemaNamer): void {
  for (const parameter of operation.parameters ?? []) if (parameter.schema !== undefined) parameter.schema = namer.name(parameter.schema);
  for (const media of Object.values(operation.requestBody?.content ?? {}))
    if (media.schema !== undefined) media.schema = namer.name(media.schema);
  for (const response of Object.values(operation.responses ?? {})) {
    for (const media of Object.values(response.content ?? {})) if (media.schema !== undefined) media.schema = namer.name(media.schema);
    for (const header of Object.values(response.headers ?? {}) as Array<{ schema?: unknown }>)
      if (header.schema !== undefined) header.schema = namer.name(header.schema);
  }
}

/** Keywords whose value is a map of schemas, a list of schemas, or one schema (JSON Schema 2020-12). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);

const NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Moves every schema with a `title` into `components.schemas` under that title and puts a `$ref` in
 * its place (inner ones first, so a named schema refers to the named schemas it holds). Two different
 * schemas with one title are a mistake in the routes' schemas: the document is refused, naming it.
 * A nullable named schema (`type: [..., 'null']`) becomes `anyOf` the named schema and null.
 */
export class SchemaNamer {
  readonly schemas: Record<string, unknown>;
  readonly #forms = new Map<string, string>();

  constructor(existing: Record<string, unknown>) {
    this.schemas = { ...existing };
    for (const [name, schema] of Object.entries(existing)) this.#forms.set(name, stableJson(schema));
  }

  name(schema: unknown): unknown {
    if (!isObject(schema)) return schema;
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'nullable') continue; // NullableInteger's keyword for the serializer (schemas.ts): a type list below
      if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.name(v)]));
      else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((v) => this.name(v));
      else if (SCHEMA_VALUES.has(key) && isObject(value)) out[key] = this.name(value);
      else out[key] = value;
    }
    if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
    const title = out.title;
    if (typeof title !== 'string') return out;
    if (!NAME.test(title)) throw new Error(`OpenAPI: schema title "${title}" is not a component name (letters, digits, ".", "-", "_")`);
    const type = out.type;
    if (Array.isArray(type) && type.includes('null')) {
      const rest = type.filter((t) => t !== 'null');
      const named: Json = { ...out, type: rest.length === 1 ? rest[0] : rest };
      if (Array.isArray(named.enum)) named.enum = named.enum.filter((v) => v !== null);
      return { anyOf: [this.#register(title, named), { type: 'null' }] };
    }
    return this.#register(title, out);
  }

  #register(title: string, schema: Json): Json {
    const form = stableJson(schema);
    const known = this.#forms.get(title);
    if (known === undefined) {
      this.#forms.set(title, form);
      this.schemas[title] = schema;
    } else if (known !== form) {
      throw new Error(
        `OpenAPI: two different schemas are titled "${title}"; give one another title (each title names one component schema)`,
      );
    }
    return { $ref: `#/components/schemas/${title}` };
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted: equal for schemas that say the same, whatever order they were built in. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

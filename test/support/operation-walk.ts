import { randomUUID } from 'node:crypto';
import { ResponseChecker } from './conformance.js';

type Json = Record<string, any>;

/**
 * Response headers a client acts on: each one sent must be declared on the response (a 304 repeats
 * the headers of the 200 it stands for). Cache-Control and Vary are for caches and left out.
 */
const WATCHED = [
  'etag',
  'location',
  'retry-after',
  'link',
  'x-cursor-next',
  'x-cursor-prev',
  'idempotent-replayed',
  'www-authenticate',
  'content-disposition',
  'content-language',
];

/** One operation of the published document. */
export interface DocumentedOperation {
  operationId: string;
  method: string;
  /** The OpenAPI path, `/v1/orders/{id}`. */
  path: string;
  statuses: string[];
  scopes: string[] | undefined;
  hasBody: boolean;
  /** Every media type of its request body refuses members its schema does not name. */
  closedBody: boolean;
  idempotent: boolean;
  queryNames: string[];
  /**
   * A read whose only parameters are path segments of any text: no request fails their validation,
   * so the 422 that the document lists for parameters cannot happen.
   */
  freeParameters: boolean;
}

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

export interface SendOptions {
  /** The path with its parameters filled in (and a query string); the operation's path by default. */
  path?: string;
  /** An access token; null sends none. The walk's default token otherwise. */
  token?: string | null;
  /** A JSON body (serialised), or raw text with `contentType`. */
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** An Idempotency-Key (a fresh one by default on an idempotent operation); null sends none. */
  key?: string | null;
}

/**
 * Every schema object that lists `properties` and says nothing of other members gets
 * `unevaluatedProperties: false`: a response member the document does not name is then reported
 * (generated clients drop or refuse it) instead of passing unseen.
 */
export function closedSchemas(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closedSchemas);
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, closedSchemas(v)]));
  if (
    typeof out.properties === 'object' &&
    out.properties !== null &&
    !('additionalProperties' in out) &&
    !('unevaluatedProperties' in out) &&
    !('patternProperties' in out)
  )
    out.unevaluatedProperties = false;
  return out;
}

/**
 * A client written from the published OpenAPI document alone: it sends requests over HTTP, checks
 * each response against the document (status listed for the operation, required headers, body
 * against its schema with no undocumented member), and records which statuses of which operations
 * it has seen, so that a test can require every operation and status to have been exercised.
 */
export class OperationWalk {
  readonly operations: DocumentedOperation[];
  readonly problems: string[] = [];
  /** Requests that did not get the status the walk expected. */
  readonly mismatches: string[] = [];
  readonly seen = new Map<string, Set<string>>();
  readonly #checker: ResponseChecker;
  readonly #byId = new Map<string, DocumentedOperation>();

  constructor(
    readonly base: string,
    readonly document: Json,
    public token: string,
  ) {
    this.#checker = new ResponseChecker(closedSchemas(document));
    this.operations = [];
    for (const [path, item] of Object.entries(document.paths as Json))
      for (const [method, op] of Object.entries(item as Json)) {
        const security = (op.security ?? []) as Array<Record<string, string[]>>;
        const parameters = ((op.parameters ?? []) as Json[]).map((p) =>
          typeof p.$ref === 'string' ? document.components.parameters[p.$ref.split('/').pop()!] : p,
        );
        const operation: DocumentedOperation = {
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          statuses: Object.keys(op.responses ?? {}),
          scopes: security.length === 0 ? undefined : Object.values(security[0]!)[0],
          hasBody: op.requestBody !== undefined,
          closedBody: Object.values((op.requestBody?.content ?? {}) as Record<string, { schema?: Json }>).every((media) => {
            const ref = media.schema?.$ref;
            const schema = typeof ref === 'string' ? document.components.schemas[ref.split('/').pop()!] : media.schema;
            return schema?.additionalProperties === false;
          }),
          idempotent: parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
          queryNames: parameters.filter((p) => p.in === 'query').map((p) => p.name as string),
          freeParameters: method === 'get' && parameters.every((p) => p.in === 'path' && JSON.stringify(p.schema) === '{"type":"string"}'),
        };
        this.operations.push(operation);
        this.#byId.set(operation.operationId, operation);
      }
  }

  operation(operationId: string): DocumentedOperation {
    const found = this.#byId.get(operationId);
    if (found === undefined) throw new Error(`the document has no operation ${operationId}`);
    return found;
  }

  async send(operationId: string, options: SendOptions = {}): Promise<Sent> {
    const op = this.operation(operationId);
    const path = options.path ?? op.path;
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? this.token : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    if (op.idempotent && options.key !== null) headers['idempotency-key'] = options.key ?? randomUUID();
    Object.assign(headers, options.headers);
    const abort = new AbortController();
    const res = await fetch(`${this.base}${path}`, { method: op.method, headers, body, signal: abort.signal });
    let text = '';
    const stream = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (stream) abort.abort();
    else text = await res.text();
    const raw: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      raw[name] = value;
    });
    const declared = Object.keys(this.document.paths[op.path][op.method.toLowerCase()].responses[String(res.status)]?.headers ?? {}).map(
      (h) => h.toLowerCase(),
    );
    for (const name of WATCHED)
      if (raw[name] !== undefined && !declared.includes(name) && res.status !== 304)
        this.problems.push(`${operationId} ${res.status}: header ${name} sent but not declared (request ${op.method} ${path})`);
    const route = op.path.replace(/\{(\w+)\}/g, ':$1');
    const found = this.#checker.check(op.method, route, res.status, raw, stream ? 'stream' : text);
    this.problems.push(...found.map((p) => `${p} (request ${op.method} ${path})`));
    // Every response of the API names its request (the document marks X-Request-Id required).
    if (!/^req_[0-9a-z]{26}$/.test(raw['x-request-id'] ?? ''))
      this.problems.push(`${operationId} ${res.status}: no X-Request-Id (request ${op.method} ${path})`);
    let parsed: Json = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as Json);
    } catch {}
    if (res.status >= 400 && parsed.request_id !== raw['x-request-id'])
      this.problems.push(`${operationId} ${res.status}: the error body's request_id is not the X-Request-Id header`);
    const statuses = this.seen.get(operationId) ?? new Set<string>();
    statuses.add(String(res.status));
    this.seen.set(operationId, statuses);
    // A tagged representation is revalidated as a cache would: with If-None-Match, an empty 304.
    const etag = res.headers.get('etag');
    if (op.method === 'GET' && res.status === 200 && etag !== null && options.headers?.['if-none-match'] === undefined)
      await this.expect(304, operationId, { ...options, headers: { ...options.headers, 'if-none-match': etag } });
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  /** Sends, and fails unless the status is the one expected. */
  async expect(status: number, operationId: string, options: SendOptions = {}): Promise<Sent> {
    const sent = await this.send(operationId, options);
    if (sent.status !== status)
      this.mismatches.push(`${operationId} ${options.path ?? ''}: expected ${status}, got ${sent.status} ${sent.text.slice(0, 300)}`);
    return sent;
  }

  /**
   * What the document makes every operation of its kind able to answer, exercised on each operation:
   * 401 without a token; 403 with a token of another scope; 415 with a text body; 413 with a body over
   * 64 KiB; 422 without the Idempotency-Key, with an unknown body member, or a page size of 0.
   * `paths` gives each operation a path with its parameters filled in.
   */
  async sharedErrors(
    paths: Record<string, string>,
    otherScopeToken: (scope: string) => Promise<string>,
    onlyScopeToken: (scope: string) => Promise<string>,
  ): Promise<void> {
    for (const op of this.operations) {
      const path = paths[op.operationId] ?? op.path;
      const declares = (status: string) => op.statuses.includes(status);
      if (declares('401') && op.scopes !== undefined) {
        await this.expect(401, op.operationId, { path, token: null });
        await this.expect(401, op.operationId, { path, token: 'not.a.token' });
      }
      if (declares('403') && op.scopes !== undefined && op.scopes.length > 0) {
        await this.expect(403, op.operationId, { path, token: await otherScopeToken(op.scopes[0]!) });
        // The scope the document names is enough: a token with that scope alone is not refused for it.
        const named = await this.send(op.operationId, {
          path,
          token: await onlyScopeToken(op.scopes[0]!),
          body: op.hasBody ? {} : undefined,
        });
        if (named.status === 403)
          this.mismatches.push(`${op.operationId}: a token with only ${op.scopes[0]} got 403 ${named.text.slice(0, 200)}`);
      }
      // The token endpoint takes form bodies too: another media type stands for a wrong one.
      if (declares('415')) await this.expect(415, op.operationId, { path, raw: 'text', contentType: 'text/csv' });
      if (declares('413') || op.method !== 'GET')
        await this.send(op.operationId, { path, raw: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }) });
      if (op.method !== 'GET') {
        await this.send(op.operationId, { path, raw: 'text', contentType: 'text/csv' });
        await this.send(op.operationId, { path, raw: '{' });
      }
      if (op.idempotent) await this.expect(422, op.operationId, { path, key: null, body: {} });
      if (op.hasBody) {
        // A member the body's schema does not name: refused exactly when the schema is closed (a
        // body refused for another reason first, a required member missing, says nothing of it).
        const sent = await this.send(op.operationId, { path, body: { zz_unknown_member: 1 } });
        const details = (sent.body.details ?? []) as Json[];
        const refused = sent.status === 422 && details.some((d) => d.rule === 'additionalProperties');
        if ((refused || sent.status < 400) && refused !== op.closedBody)
          this.mismatches.push(
            `${op.operationId}: an unknown body member got ${sent.status} ${sent.text.slice(0, 200)}, the schema is ${op.closedBody ? 'closed' : 'open'}`,
          );
      }
      if (op.queryNames.includes('limit')) await this.expect(422, op.operationId, { path: `${path.split('?')[0]}?limit=0` });
    }
  }

  /** `operationId status` of each listed status not seen, but those `exempt` names (with a reason). */
  unexercised(exempt: Record<string, string>): string[] {
    const missing: string[] = [];
    for (const op of this.operations) {
      const seen = this.seen.get(op.operationId) ?? new Set<string>();
      if (![...seen].some((s) => s.startsWith('2') || s === '304')) missing.push(`${op.operationId}: no success`);
      for (const status of op.statuses) {
        if (seen.has(status) || status.startsWith('2')) continue;
        if (exempt[status] !== undefined || exempt[`${op.operationId} ${status}`] !== undefined) continue;
        if (status === '422' && op.freeParameters) continue;
        missing.push(`${op.operationId} ${status}`);
      }
    }
    return missing;
  }
}

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../src/http/app.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default: AddFormats }).default;

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  responses?: Record<string, { headers?: Record<string, Json>; content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { headers?: Record<string, Json> };
}

const DOCUMENT_ID = 'https://openapi.invalid/document.json';

function pointer(...segments: string[]): string {
  return segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/**
 * Checks responses against the OpenAPI document the service publishes: the status is one the
 * operation lists, every header it marks required is there, every documented header present has a
 * value of its schema, and a JSON body validates against the response's schema (JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1, with the document's component schemas). Returns the problems found.
 */
export class ResponseChecker {
  readonly #document: Document;
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(document: unknown) {
    this.#document = document as Document;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, coerceTypes: false });
    addFormats(this.#ajv);
    this.#ajv.addSchema(document as object, DOCUMENT_ID);
  }

  /** The operation of a route (`GET`, `/v1/orders/:id`), or undefined when the document leaves it out. */
  operation(method: string, routeUrl: string): { path: string; method: string; operation: Operation } | undefined {
    const path = routeUrl.replace(/:(\w+)/g, '{$1}');
    const operation = this.#document.paths[path]?.[method.toLowerCase()];
    return operation === undefined ? undefined : { path, method: method.toLowerCase(), operation };
  }

  check(
    method: string,
    routeUrl: string,
    status: number,
    headers: Record<string, unknown>,
    body: string | Buffer | null | undefined | 'stream',
  ): string[] {
    const found = this.operation(method, routeUrl);
    if (found === undefined) return [];
    const { path, operation } = found;
    const name = `${method.toUpperCase()} ${path} (${operation.operationId ?? 'no operationId'})`;
    const responses = operation.responses ?? {};
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((key) => responses[key] !== undefined);
    if (statusKey === undefined)
      return [`${name} answered ${status}, a status the document does not list (it lists ${Object.keys(responses).join(', ')})`];
    const response = responses[statusKey]!;
    const problems: string[] = [];

    for (const [headerName, declared] of Object.entries(response.headers ?? {})) {
      const header = this.#resolveHeader(declared);
      const value = headers[headerName.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`${name} ${status}: required header ${headerName} is missing`);
        continue;
      }
      const validate = this.#validator(`header ${JSON.stringify(header.schema)}`, () => ({ ...(header.schema as Json) }));
      if (!validate(headerValue(value, header.schema as Json)))
        problems.push(
          `${name} ${status}: header ${headerName}: ${JSON.stringify(value)} ${(validate.errors ?? []).map((e) => e.message).join(', ')}`,
        );
    }

    if (body === 'stream') return problems;
    const text = body === null || body === undefined ? '' : body.toString();
    const contentType = String(headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const content = response.content ?? {};
    if (text === '') {
      return problems;
    }
    if (Object.keys(content).length === 0)
      return [...problems, `${name} ${status}: a ${contentType || 'body'} body where the document has none`];
    const media = content[contentType];
    if (media === undefined)
      return [...problems, `${name} ${status}: Content-Type ${contentType} where the document lists ${Object.keys(content).join(', ')}`];
    if (media.schema === undefined || !contentType.endsWith('json')) return problems;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return [...problems, `${name} ${status}: the body is not JSON`];
    }
    const ref = `${DOCUMENT_ID}#${pointer('', 'paths', path, found.method, 'responses', statusKey, 'content', contentType, 'schema')}`;
    const validate = this.#validator(ref, () => ({ $ref: ref }));
    if (!validate(parsed)) {
      const errors = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '(body)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
      problems.push(`${name} ${status}: the body breaks the published schema: ${errors.join('; ')}\n  body: ${text.slice(0, 600)}`);
    }
    return problems;
  }

  #resolveHeader(declared: Json): Json {
    const ref = declared.$ref;
    if (typeof ref !== 'string') return declared;
    const name = ref.replace('#/components/headers/', '');
    return this.#document.components.headers?.[name] ?? {};
  }

  #validator(key: string, schema: () => object): ValidateFunction {
    let validate = this.#validators.get(key);
    if (validate === undefined) {
      validate = this.#ajv.compile(schema());
      this.#validators.set(key, validate);
    }
    return validate;
  }
}

/** A header's text as the value its schema describes (headers are text on the wire). */
function headerValue(value: unknown, schema: Json | undefined): unknown {
  const text = Array.isArray(value) ? value.join(', ') : String(value);
  if (schema?.type === 'integer' || schema?.type === 'number') return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  if (schema?.type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  return text;
}

/** One checker per published document (documents of runtimes with the same configuration are equal). */
const checkers = new Map<string, ResponseChecker>();

function checkerFor(document: unknown): ResponseChecker {
  const key = JSON.stringify(document);
  let checker = checkers.get(key);
  if (checker === undefined) {
    checker = new ResponseChecker(document);
    checkers.set(key, checker);
  }
  return checker;
}

/**
 * Checks every response the app sends through a route against the document the app publishes
 * (`app.swagger()`, what GET /v1/openapi.json serves), and records each problem in `problems`.
 * Responses of unknown routes and of routes left out of the document (the dashboard, /docs) are not
 * checked; nor are the bodies of streams.
 */
export function checkResponsesAgainstDocument(app: App, problems: string[]): void {
  let checker: ResponseChecker | undefined;
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    const url = request.routeOptions.url;
    if (url !== undefined && request.method !== 'HEAD') {
      try {
        checker ??= checkerFor(app.swagger());
        // Node sends no body with a 204 or a 304, whatever the handler gave.
        const bodyless = reply.statusCode === 204 || reply.statusCode === 304;
        const body = bodyless
          ? null
          : typeof payload === 'string' || Buffer.isBuffer(payload) || payload === null || payload === undefined
            ? payload
            : 'stream';
        problems.push(...checker.check(request.method, url, reply.statusCode, reply.getHeaders(), body));
      } catch (error) {
        problems.push(`${request.method} ${url}: the response could not be checked: ${(error as Error).stack ?? String(error)}`);
      }
    }
    done(null, payload);
  });
}

import fastJsonStringify from 'fast-json-stringify';
import type { ValidateFunction } from 'ajv';
import { bodyAjv, textAjv } from '../lib/validation.js';

/**
 * Route validators and response serializers, compiled once per process for each distinct schema.
 *
 * Fastify compiles every route's schemas when an app starts, and hands the compilers copies of the
 * route's schemas, so neither ajv's own cache (by object) nor anything keyed by identity sees the
 * same schema twice. Keyed by the schema's JSON text instead, a second app in the same process (a
 * test's second runtime, an embedder's second server) reuses the first one's code: building an app
 * took about 115 ms of CPU less (compilation and the garbage it leaves; 20 apps in one process, 6.9 s
 * before, 4.6 s after), the cache's keys cost about 7 ms an app. A process that builds one app
 * compiles exactly what it compiled before.
 *
 * The compilers take no shared schemas (no route refers to one by `$id`), so the text of a schema is
 * all that its compiled code depends on.
 */
const validators = new Map<string, ValidateFunction>();
const serializers = new Map<string, (data: unknown) => string>();

/** The validator of one part of a request: bodies as sent, query strings and path parameters coerced. */
export function routeValidator(schema: object, httpPart: string | undefined): ValidateFunction {
  const body = httpPart === 'body';
  const key = `${body ? 'body' : 'text'}\n${JSON.stringify(schema)}`;
  let validate = validators.get(key);
  if (validate === undefined) {
    validate = (body ? bodyAjv : textAjv).compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

/** The serializer of one response schema, as Fastify's default compiler builds it. */
export function responseSerializer(schema: object): (data: unknown) => string {
  const key = JSON.stringify(schema);
  let serialize = serializers.get(key);
  if (serialize === undefined) {
    serialize = fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0], { schema: {} });
    serializers.set(key, serialize);
  }
  return serialize;
}

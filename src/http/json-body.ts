import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { validationError } from '../lib/errors.js';
import { OPTIONAL_BODY } from './schemas.js';

/**
 * The deepest nesting of arrays and objects a request body may have (`{}` is 1, `{"a":[1]}` is 2).
 * The API's own bodies nest a few levels (an order whose `client_metadata` is at its own limit of 5
 * nests 6); a limit well above that refuses only bodies built to exhaust what walks them recursively
 * afterwards (the validator, the serialiser of an error that echoes the value, the canonical form of
 * an idempotency fingerprint), which a few thousand levels do.
 */
export const MAX_BODY_DEPTH = 32;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of arrays and objects in a JSON text, read from its characters in one pass,
 * without parsing and without recursion: brackets inside strings (escaped quotes included) do not
 * count. Linear in the text's length, constant in memory. A text that is not JSON gets some number;
 * the parser refuses such a text afterwards anyway.
 */
export function jsonNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest) deepest = depth;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Replaces the JSON body parser. An empty body is no body, as without a Content-Type: a route whose
 * body is optional takes it, one that needs a body answers 422 `rule: required`. A body whose bytes
 * are not UTF-8 is not JSON text (RFC 8259 §8.1) and is refused (422, `rule: json`): decoding it
 * would put U+FFFD in place of each bad byte, so the service would store, sign or compare text the
 * client never sent. Otherwise the nesting is measured on the raw text first, and a body deeper than
 * MAX_BODY_DEPTH is refused (422, `rule: maxDepth`) before it is parsed, validated or handled.
 * Fastify's own parser does the rest (syntax, `__proto__` and `constructor` members), unchanged.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    const bytes = raw as Buffer; // parseAs: 'buffer'
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(validationError([{ field: 'body', rule: 'json', value: null }], 'Request body is not valid JSON: its bytes are not UTF-8'));
      return;
    }
    const body = bytes.toString('utf8');
    const depth = jsonNesting(body);
    if (depth > MAX_BODY_DEPTH) {
      done(
        validationError(
          [
            {
              field: 'body',
              rule: 'maxDepth',
              value: depth,
              message: `the body nests ${depth} levels of arrays and objects; at most ${MAX_BODY_DEPTH}`,
            },
          ],
          `Request body nests ${depth} levels of arrays and objects; at most ${MAX_BODY_DEPTH}`,
        ),
      );
      return;
    }
    parse(request, body, done);
  });
}

/**
 * A route's preValidation hook for a body that may be left out (revoking, rotating a secret,
 * cancelling an order): no body is the empty object, so the schema checks one shape and an
 * Idempotency-Key sent with no body and with `{}` fingerprints the same request. A JSON `null` is a
 * body, and not an object: the schema refuses it (`type`), as on every other route.
 */
export const absentBodyIsEmpty: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined) request.body = {};
  done();
};

const OPTIONAL_KEY = Object.keys(OPTIONAL_BODY)[0] as string;

type OpenApiOperation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> } };

/**
 * The OpenAPI document with `requestBody.required: false` on each body marked OPTIONAL_BODY: the
 * generator marks every body that has a schema required.
 */
export function documentOptionalBodies<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, OpenApiOperation>> }).paths ?? {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      if (body !== undefined && Object.values(body.content ?? {}).some((media) => media.schema?.[OPTIONAL_KEY] === true))
        body.required = false;
    }
  }
  return document;
}

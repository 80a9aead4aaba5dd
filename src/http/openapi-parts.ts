// The shared parts of the OpenAPI document (openapi.ts): the descriptions of the statuses every route
// of a kind can answer, the response headers the service sends, and the Idempotency-Key parameter.

type Json = Record<string, unknown>;

/** What each error status means, for responses whose route gave no description of its own. */
export const ERROR_DESCRIPTIONS: Record<string, string> = {
  '401': '`unauthorized`: the access token is missing, malformed, expired or no longer accepted.',
  '403': '`forbidden`: the access token lacks the scope of the operation (`Missing scope: <scope>`).',
  '404': '`not_found`: the resource does not exist or belongs to another client.',
  '408': '`request_timeout`: the request did not arrive in time; answered on the connection, which is then closed.',
  '409':
    '`conflict`: the resource is not in a state that allows this, or a request with the same Idempotency-Key is still running (`Retry-After: 1`).',
  '413': '`payload_too_large`: the body is over 64 KiB.',
  '415': '`unsupported_media_type`: the body is not `application/json`.',
  '422': '`validation_error`: the body, a parameter or a header is invalid, or a business rule refuses the request; `details` says which.',
  '429': '`rate_limit_exceeded`: over the per-minute limit; retry after `Retry-After` seconds.',
  '500': '`internal_error`: a transient failure; nothing was kept. Retry (a POST with the same Idempotency-Key).',
  '503':
    '`service_unavailable`: the database cannot be reached (a restart, a failover); nothing was kept. Retry after `Retry-After` seconds (a POST with the same Idempotency-Key).',
};

export const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '304': 'Not modified',
};

/** The response headers the service sends, as components. */
export const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: "The id of this request, as in an error body's `request_id` and in every log line of the request; quote it to support.",
    required: true,
    schema: { type: 'string', pattern: '^req_[0-9a-z]{26}$' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the current one-minute window.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': {
    description: 'End of the current window, in Unix seconds.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
  'Retry-After-Conflict': {
    description: 'Whole seconds to wait before retrying, when a request with the same Idempotency-Key is still running.',
    required: false,
    schema: { type: 'integer', minimum: 1 },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key and body.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
  ETag: {
    description: 'A strong tag of the representation, on every 200; send it in `If-None-Match` for a 304 while it is unchanged.',
    required: false,
    schema: { type: 'string' },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme and, for a token, why it was refused (RFC 6750).',
    required: false,
    schema: { type: 'string' },
  },
};

export const HEADER_NAMES: Record<string, string> = { 'Retry-After-Conflict': 'Retry-After' };

export const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description:
    'A UUID chosen by the client for this request. A retry with the same key and body within 24 hours returns the first response (with `Idempotent-Replayed: true`) and does nothing again.',
  schema: { type: 'string', format: 'uuid' },
};

/**
 * Headers that routes declare and send on every answer they are declared for: a listing's cursors
 * are there on every page, empty at the end (or, for the previous page, on the first one).
 */
export const ALWAYS_SENT = ['X-Cursor-Next', 'X-Cursor-Prev'];

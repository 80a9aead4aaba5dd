/**
 * The codes of the service's error table (the spec's Errors section plus the few the service adds, in
 * docs/errors.md), and the SDK's own code for a response that is not a cauri error body (a proxy's HTML page).
 * The union is closed on the SDK side, so callers can `switch (err.code)`; a code the SDK does not know
 * yet is passed through as-is rather than hidden.
 */
export type CauriErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'request_timeout'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_error'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'service_unavailable'
  | 'unexpected_response';

/** One entry of an error body's `details`: which field, which rule, the offending value. */
export interface CauriErrorDetail {
  field: string;
  rule: string;
  value: unknown;
  [extra: string]: unknown;
}

/** The service answered with a non-2xx status; everything its error body said is kept. */
export class CauriApiError extends Error {
  override readonly name = 'CauriApiError';
  readonly status: number;
  readonly code: CauriErrorCode | (string & {});
  readonly details: CauriErrorDetail[] | undefined;
  /** Quote it to support: the error body's `request_id`, else the `X-Request-Id` header, else null. */
  readonly request_id: string | null;
  /** The OAuth 2.0 `error` member the token endpoint adds (`invalid_client`, ...). */
  readonly oauthError: string | undefined;
  /** Seconds from `Retry-After`, when the response had one. */
  readonly retryAfter: number | undefined;
  /** `METHOD path` of the request, for logs. */
  readonly operation: string;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: CauriErrorDetail[] | undefined;
    request_id: string | null;
    oauthError?: string | undefined;
    retryAfter?: number | undefined;
    operation: string;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.request_id = init.request_id;
    this.oauthError = init.oauthError;
    this.retryAfter = init.retryAfter;
    this.operation = init.operation;
  }
}

/**
 * No response arrived (connection refused or reset, DNS failure, time-out), and the retries are
 * spent. The underlying error is `cause`. A mutating call may or may not have taken effect: retry it
 * with the same `idempotencyKey` (it is on this error) to find out without creating a duplicate.
 */
export class CauriNetworkError extends Error {
  override readonly name = 'CauriNetworkError';
  readonly code = 'network_error' as const;
  readonly operation: string;
  readonly idempotencyKey: string | undefined;

  constructor(operation: string, idempotencyKey: string | undefined, cause: unknown) {
    super(`${operation}: no response from the service (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.operation = operation;
    this.idempotencyKey = idempotencyKey;
  }
}

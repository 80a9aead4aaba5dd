/**
 * The one error type of the service. Its codes are the closed set of the specification's error table
 * plus the few the service adds (docs/errors.md); the HTTP edge turns it into the specification's error body.
 */
export type ErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'request_timeout'
  | 'validation_error'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'service_unavailable';

export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // Answered on the connection itself, when a request is not received within its time-out.
  request_timeout: 408,
  validation_error: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  // The database cannot be reached (restarting, failing over, out of connections): nothing was kept.
  service_unavailable: 503,
};

/** One entry of an error body's `details`: which field, which rule, and the offending value. */
export interface ErrorDetail {
  field: string;
  rule: string;
  value: unknown;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** Extra top-level members of the error body (the OAuth `error` of the token endpoint). */
  readonly extra: Record<string, string> | undefined;
  /** Response headers that belong to this error (Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; extra?: Record<string, string>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = STATUS_OF[code];
    this.details = options.details;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  /** The same error with another message, details or extra members (its code, headers and cause kept). */
  with(changes: { message?: string; details?: ErrorDetail[]; extra?: Record<string, string> }): ApiError {
    const details = changes.details ?? this.details;
    const extra = changes.extra ?? this.extra;
    return new ApiError(this.code, changes.message ?? this.message, {
      ...(details === undefined ? {} : { details }),
      ...(extra === undefined ? {} : { extra }),
      ...(this.headers === undefined ? {} : { headers: this.headers }),
      ...(this.cause === undefined ? {} : { cause: this.cause }),
    });
  }
}

export function validationError(details: ErrorDetail[], message?: string): ApiError {
  const first = details[0];
  return new ApiError('validation_error', message ?? (first ? `Invalid ${first.field}: ${first.rule}` : 'Validation failed'), { details });
}

export function notFound(resource: string, id: string): ApiError {
  return new ApiError('not_found', `${resource} ${id} not found`);
}

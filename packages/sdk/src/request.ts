// The client's request options, typed by the OpenAPI operations, and the reading of responses and errors.
import { CauriApiError, type CauriErrorDetail } from './errors.js';
import { parseRetryAfter, type RetryPolicy } from './retry.js';
import type { ApiPath, MethodOf, PathParams, QueryParams, RequestBody } from './types.js';

export interface CauriClientOptions {
  /** The service's root, e.g. `https://api.cauri.example` (paths begin with `/v1/`). */
  baseUrl: string;
  /** `cli_...`. Without credentials only the public calls work (partners, instruments, CRL, key document). */
  clientId?: string;
  /** `sk_test_...` or `sk_live_...`. */
  clientSecret?: string;
  /**
   * The service's name (its `CAURI_SERVICE_NAME`, `cauri` by default), which names its key document
   * `/.well-known/<name>`; default: read once, on the first `keyDocument()`, from the revocation
   * list's `issuer`, which is that name.
   */
  serviceName?: string;
  /** Scopes to ask for; default: every scope the client may have. */
  scopes?: readonly string[];
  /** The fetch to use; default the global one. Tests and proxies wrap it. */
  fetch?: typeof fetch;
  /** Overrides of the retry policy (see retry.ts); `{ maxAttempts: 1 }` disables retries. */
  retry?: Partial<RetryPolicy>;
  /**
   * Per-attempt time-out, from the request until its whole answer is read (for the event stream,
   * until its headers); default 30 s. A time-out counts as a network error (retried).
   */
  timeoutMs?: number;
  /** Refresh the access token this long before it expires; default 60 s. */
  tokenRefreshMarginSeconds?: number;
  /**
   * How the client waits between attempts; default a timer. Tests record the waits instead. The
   * call's abort signal is passed on; whatever this does, an abort ends the wait at once.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Current time in epoch milliseconds, for token expiry and HTTP-date Retry-After; default Date.now. */
  now?: () => number;
  /** Source of backoff jitter in [0, 1); default Math.random. */
  random?: () => number;
}

/** Per-call options every method accepts. */
export interface CallOptions {
  /**
   * The Idempotency-Key of a mutating POST; default a fresh UUID per call. Pass your own to retry a
   * call across process restarts: within 24 h the service answers with the first response.
   */
  idempotencyKey?: string;
  /**
   * Aborts the call whatever it is doing (waiting for its token, for an answer, reading it, or
   * between two attempts): it rejects at once with the signal's reason (an `AbortError` by default),
   * and is not retried.
   */
  signal?: AbortSignal;
}

/**
 * Options of a list method (its second argument, after the filters). `signal` aborts the page being
 * fetched, and with it the iteration: the loop or `toArray()` rejects with the signal's reason, and
 * no further page is fetched.
 */
export type ListOptions = Pick<CallOptions, 'signal'>;

export type PathPart<P extends ApiPath, M extends MethodOf<P>> = [PathParams<P, M>] extends [never]
  ? { path?: undefined }
  : { path: PathParams<P, M> };
export type QueryPart<P extends ApiPath, M extends MethodOf<P>> = [QueryParams<P, M>] extends [never]
  ? { query?: undefined }
  : { query?: QueryParams<P, M> };
export type BodyPart<P extends ApiPath, M extends MethodOf<P>> = [RequestBody<P, M>] extends [never]
  ? { body?: undefined }
  : { body: RequestBody<P, M> };

export type RequestOptions<P extends ApiPath, M extends MethodOf<P>> = PathPart<P, M> &
  QueryPart<P, M> &
  BodyPart<P, M> &
  CallOptions & {
    /** Send the bearer token; default true. The public routes pass false. */
    auth?: boolean;
  };

/** What came back: the parsed body, the status and the headers (cursors, rate limits, request id). */
export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface HeldToken {
  value: string;
  /** Epoch ms after which the token is refreshed before use. */
  refreshAt: number;
}

export const TOKEN_PATH = '/v1/auth/token';

/** Fills `{name}` segments of a path template, each value percent-encoded. */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null || value === '') throw new TypeError(`${template}: path parameter ${name} is required`);
    return encodeURIComponent(String(value));
  });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204 || response.status === 304) {
    await response.body?.cancel();
    return undefined;
  }
  if (/^application\/pdf\b/i.test(response.headers.get('content-type') ?? '')) return new Uint8Array(await response.arrayBuffer());
  const text = await response.text();
  if (text === '') return undefined;
  return /\bjson\b/i.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
}

/** The error of a non-2xx response, from the spec's error body when there is one. */
export async function readErrorBody(response: Response): Promise<Record<string, unknown> | null> {
  try {
    const body = await readBody(response);
    return isRecord(body) && typeof body.code === 'string' && typeof body.message === 'string' ? body : null;
  } catch {
    return null;
  }
}

/** The error of a non-2xx response, from the spec's error body when there is one. */
export async function apiError(response: Response, operation: string, nowMs: number): Promise<CauriApiError> {
  const body = await readErrorBody(response);
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), nowMs);
  return new CauriApiError({
    status: response.status,
    code: body === null ? 'unexpected_response' : String(body.code),
    message: body === null ? `${operation} answered ${response.status} without a cauri error body` : String(body.message),
    details: Array.isArray(body?.details) ? (body.details as CauriErrorDetail[]) : undefined,
    request_id: (typeof body?.request_id === 'string' ? body.request_id : null) ?? response.headers.get('x-request-id'),
    oauthError: typeof body?.error === 'string' ? body.error : undefined,
    retryAfter: retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000),
    operation,
  });
}

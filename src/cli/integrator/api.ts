import { randomUUID } from 'node:crypto';
import { say } from '../i18n.js';
import { CliError } from '../output.js';
import type { Credentials } from './credentials.js';

/** Refresh this long before the token's stated expiry, so a request never carries a just-expired token. */
const EXPIRY_MARGIN_MS = 60_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** A mutating request is sent at most this many times, all with the same Idempotency-Key. */
const MUTATION_ATTEMPTS = 4;
const RETRY_BASE_MS = 500;
/** A `Retry-After` longer than this (one rate-limit window) is not waited for: the refusal is printed. */
const RETRY_AFTER_MAX_MS = 60_000;

/** The service could not be reached at all (refused, DNS, timeout): worth retrying later. Said in the run's language. */
export class UnreachableError extends CliError {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(say('api.unreachable', { url, reason: describeNetworkError(cause) }));
    this.name = 'UnreachableError';
  }
}

/** The service answered with an error body; `code` is the spec's error code. */
export class ApiCallError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Whole seconds of the answer's `Retry-After`, when it had one. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code !== undefined)
    return cause.code === 'ECONNREFUSED' ? say('api.refused') : `${cause.code}${cause.message === undefined ? '' : ` (${cause.message})`}`;
  if ((error as Error).name === 'TimeoutError') return say('api.timeout');
  return (error as Error).message;
}

function describeDetail(d: { field?: string; rule?: string; value?: unknown }): string {
  const value = d.value === undefined ? '' : ` = ${JSON.stringify(d.value)}`;
  return `${d.field ?? '?'}: ${d.rule ?? '?'}${value.length > 80 ? `${value.slice(0, 77)}...` : value}`;
}

/**
 * Whether a mutating request may be sent again with its key: the service is still processing the
 * first one (409 with Retry-After), it failed transiently (500: the client retries with the same
 * key, and a 500 is not recorded against it), it is rate limiting (429), or it, or a proxy before
 * it, is briefly unavailable.
 */
function retryable(res: Response): boolean {
  return (res.status === 409 && res.headers.has('retry-after')) || [429, 500, 502, 503, 504].includes(res.status);
}

/** The wait before the next attempt: the answer's `Retry-After` (whole seconds) exactly, else the backoff; null when it asks for too long. */
function retryDelayMs(res: Response | null, attempt: number): number | null {
  const stated = res?.headers.get('retry-after')?.trim();
  if (stated !== undefined && /^[0-9]+$/.test(stated)) return Number(stated) * 1000 > RETRY_AFTER_MAX_MS ? null : Number(stated) * 1000;
  return RETRY_BASE_MS * 2 ** attempt;
}

async function errorOf(res: Response, what: string): Promise<ApiCallError> {
  const text = await res.text().catch(() => '');
  let code = 'http_error';
  let message = text.slice(0, 300);
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown; message?: unknown; details?: { field?: string; rule?: string }[] };
    if (typeof body.code === 'string') code = body.code;
    else if (typeof body.error === 'string') code = body.error;
    if (typeof body.message === 'string') message = body.message;
    const details = (body.details ?? []).map(describeDetail).join(', ');
    if (details !== '') message += ` (${details})`;
  } catch {
    // Not a JSON error body (a proxy's page, say): its text is shown as is.
  }
  const retryAfter = res.headers.get('retry-after');
  return new ApiCallError(
    res.status,
    code,
    `${what}: ${res.status} ${code}${message === '' ? '' : `: ${message}`}`,
    retryAfter !== null && /^[0-9]+$/.test(retryAfter.trim()) ? Number(retryAfter) : null,
  );
}

/**
 * A client of a remote cauri service: exchanges the client credentials for an access token
 * (`POST /v1/auth/token`), reuses it until shortly before it expires, and fetches a new one when the
 * service answers 401 once (the token was revoked by a key rotation, or the clocks disagree).
 */
export class IntegratorApi {
  #token: { value: string; expiresAt: number } | null = null;

  constructor(readonly credentials: Credentials) {}

  get baseUrl(): string {
    return this.credentials.apiUrl;
  }

  async #fetch(path: string, init: RequestInit): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    try {
      return await fetch(url, init);
    } catch (error) {
      if ((error as Error).name === 'AbortError' && init.signal?.aborted === true && init.signal.reason?.name !== 'TimeoutError')
        throw error;
      throw new UnreachableError(this.baseUrl, error);
    }
  }

  /** A valid access token, exchanged anew when `fresh` or close to expiry. */
  async token(fresh = false): Promise<string> {
    if (!fresh && this.#token !== null && Date.now() < this.#token.expiresAt - EXPIRY_MARGIN_MS) return this.#token.value;
    const res = await this.#fetch('/v1/auth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: this.credentials.clientId,
        client_secret: this.credentials.clientSecret,
      }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (res.status !== 200) {
      const error = await errorOf(res, 'token exchange failed');
      if (res.status === 401)
        throw new ApiCallError(401, error.code, say('api.credentials', { client: this.credentials.clientId, reason: error.message }), null);
      throw error;
    }
    const body = (await res.json()) as { access_token: string; expires_in: number };
    this.#token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
    return body.access_token;
  }

  /** An authenticated request; retried once with a new token on 401. Returns the raw response. */
  async send(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.token(attempt > 0);
      const res = await this.#fetch(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: init.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (res.status === 401 && attempt === 0) {
        await res.body?.cancel();
        continue;
      }
      return res;
    }
  }

  /**
   * A mutating POST that must succeed. It gets one fresh Idempotency-Key, which every retry reuses, so
   * a request whose answer was lost (the connection dropped, the service restarted) is answered from
   * the service's record rather than done twice. Retried on a network failure, on 409 while the first
   * is still processed, and on 429, 500 and 502-504. Returns the status (cancel and amend answer 200 or 202).
   */
  async mutate<T>(path: string, body: unknown): Promise<{ status: number; body: T; replayed: boolean }> {
    const headers = { 'idempotency-key': randomUUID() };
    for (let attempt = 0; ; attempt++) {
      let res: Response | null = null;
      try {
        res = await this.send('POST', path, { body, headers });
      } catch (error) {
        if (!(error instanceof UnreachableError) || attempt + 1 >= MUTATION_ATTEMPTS) throw error;
      }
      if (res !== null && res.status >= 200 && res.status <= 299) {
        return { status: res.status, body: (await res.json()) as T, replayed: res.headers.get('idempotent-replayed') === 'true' };
      }
      const wait = retryDelayMs(res, attempt);
      if (res !== null && (!retryable(res) || attempt + 1 >= MUTATION_ATTEMPTS || wait === null)) throw await errorOf(res, `POST ${path}`);
      await res?.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait ?? 0));
    }
  }

  /** A JSON request that must succeed; a mutating POST gets a fresh Idempotency-Key. */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = method === 'POST' ? { 'idempotency-key': randomUUID() } : {};
    const res = await this.send(method, path, { ...(body === undefined ? {} : { body }), headers });
    if (res.status < 200 || res.status > 299) throw await errorOf(res, `${method} ${path.split('?')[0]}`);
    return (await res.json()) as T;
  }

  /** A GET of a document in another type (a PDF) that must succeed: its bytes. */
  async bytes(path: string, accept: string): Promise<Buffer> {
    const res = await this.send('GET', path, { headers: { accept } });
    if (res.status < 200 || res.status > 299) throw await errorOf(res, `GET ${path.split('?')[0]}`);
    const type = res.headers.get('content-type') ?? '';
    if (!type.startsWith(accept))
      throw new CliError({ key: 'api.contentType', params: { path, accept, type: type === '' ? say('api.noContentType') : type } });
    return Buffer.from(await res.arrayBuffer());
  }
}

export { errorOf as apiErrorOf };

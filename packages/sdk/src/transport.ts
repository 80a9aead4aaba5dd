import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { CauriNetworkError } from './errors.js';
import { DEFAULT_RETRY_POLICY, backoffDelay, isRetryableStatus, nextDelay, parseRetryAfter, type RetryPolicy } from './retry.js';
import type { RequestBody, TokenResponse } from './types.js';
import { TOKEN_PATH, readBody, apiError, type CauriClientOptions, type CallOptions, type ApiResponse, type HeldToken } from './request.js';

/** What a method of the client adds to the caller's options for one request. */
export interface SendOptions extends CallOptions {
  accept?: string;
  /** More request headers (`Last-Event-ID`). */
  headers?: Record<string, string>;
  /** Answers with these statuses are results, not errors (a readiness check's 503). */
  statuses?: readonly number[];
  /** Return the 2xx response's body unread, as a byte stream (Server-Sent Events). */
  stream?: boolean;
}

/**
 * What every call of a CauriClient goes through: the access token (fetched on first use, refreshed
 * shortly before it expires, shared by concurrent calls) and the sending of one request with its
 * Idempotency-Key, its time-out and its retries.
 */
export class Transport {
  readonly #baseUrl: string;
  readonly #clientId: string | undefined;
  #clientSecret: string | undefined;
  readonly #scopes: readonly string[] | undefined;
  readonly #fetch: typeof fetch;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #refreshMarginMs: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #now: () => number;
  readonly #random: () => number;
  #token: HeldToken | null = null;
  #pendingToken: Promise<HeldToken> | null = null;

  constructor(options: CauriClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.#scopes = options.scopes;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    if (!Number.isInteger(this.#policy.maxAttempts) || this.#policy.maxAttempts < 1)
      throw new RangeError('retry.maxAttempts must be an integer >= 1');
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#refreshMarginMs = (options.tokenRefreshMarginSeconds ?? 60) * 1000;
    this.#sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal === undefined ? {} : { signal }));
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /** The secret of the token exchanges that follow (after the client rotated its own). */
  useSecret(secret: string): void {
    this.#clientSecret = secret;
  }

  /** Waits the backoff after `failures` failed attempts (the retry policy's, without the attempt cap), or at least `atLeastMs`. */
  async pause(failures: number, signal?: AbortSignal, atLeastMs = 0): Promise<void> {
    await this.wait(Math.max(atLeastMs, failures > 0 ? backoffDelay(failures, this.#policy, this.#random) : 0), signal);
  }

  /** Waits `ms`; an abort of `signal` ends the wait at once, rejecting with its reason. */
  async wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (ms <= 0) return signal?.throwIfAborted();
    await untilAborted(this.#sleep(ms, signal), signal);
  }

  /** Keeps `held` as the access token of the calls that follow. */
  hold(held: HeldToken): void {
    this.#token = held;
  }

  async #accessToken(signal: AbortSignal | undefined): Promise<string> {
    if (this.#token !== null && this.#now() < this.#token.refreshAt) return this.#token.value;
    // Concurrent calls share one token request; a caller's abort ends its own wait, not the request
    // the others wait for.
    this.#pendingToken ??= this.fetchToken()
      .then(({ held }) => held)
      .finally(() => {
        this.#pendingToken = null;
      });
    this.#token = await untilAborted(this.#pendingToken, signal);
    return this.#token.value;
  }

  async fetchToken(): Promise<{ token: TokenResponse; held: HeldToken }> {
    if (this.#clientId === undefined || this.#clientSecret === undefined) {
      throw new TypeError('CauriClient: clientId and clientSecret are required for authenticated calls');
    }
    const body: RequestBody<'/v1/auth/token', 'post'> = {
      grant_type: 'client_credentials',
      client_id: this.#clientId,
      client_secret: this.#clientSecret,
      ...(this.#scopes === undefined ? {} : { scope: this.#scopes.join(' ') }),
    };
    const requestedAt = this.#now();
    const { body: token } = await this.send('POST', TOKEN_PATH, TOKEN_PATH, undefined, body, false, {});
    const t = token as TokenResponse;
    // Lifetime is counted from the request, not the answer, so a slow exchange cannot overstate it.
    const lifetimeMs = t.expires_in * 1000;
    const margin = Math.min(this.#refreshMarginMs, lifetimeMs / 2);
    return { token: t, held: { value: t.access_token, refreshAt: requestedAt + lifetimeMs - margin } };
  }

  async send(
    method: string,
    template: string,
    path: string,
    query: Record<string, unknown> | undefined,
    body: unknown,
    auth: boolean,
    call: SendOptions,
  ): Promise<ApiResponse<unknown>> {
    const operation = `${method} ${template}`;
    const url = new URL(this.#baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    // The spec: every mutating POST except the token exchange takes an Idempotency-Key. The key is
    // chosen once, here, so that every retry below sends the same one.
    const idempotencyKey = method === 'POST' && template !== TOKEN_PATH ? (call.idempotencyKey ?? randomUUID()) : undefined;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let refreshedAfter401 = false;

    for (let attempt = 1; ; attempt++) {
      call.signal?.throwIfAborted();
      const headers: Record<string, string> = { ...call.headers, accept: call.accept ?? 'application/json' };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const token = auth ? await this.#accessToken(call.signal) : undefined;
      if (token !== undefined) headers.authorization = `Bearer ${token}`;

      // The time-out bounds the whole exchange, except for a stream, whose body has no end: there it
      // bounds the wait for the response's headers.
      const headersOnly = call.stream === true ? new AbortController() : null;
      const deadline =
        headersOnly === null
          ? undefined
          : setTimeout(
              () => headersOnly.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
              this.#timeoutMs,
            );
      const timeout = headersOnly?.signal ?? AbortSignal.timeout(this.#timeoutMs);
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method,
          headers,
          ...(payload === undefined ? {} : { body: payload }),
          signal: call.signal === undefined ? timeout : AbortSignal.any([call.signal, timeout]),
        });
      } catch (error) {
        if (call.signal?.aborted) throw error; // the caller's own abort is not a fault to retry
        const wait = nextDelay(attempt, undefined, this.#policy, this.#random);
        if (wait === null) throw new CauriNetworkError(operation, idempotencyKey, error);
        await this.wait(wait, call.signal);
        continue;
      } finally {
        clearTimeout(deadline);
      }

      if (call.stream === true && response.ok) return { status: response.status, headers: response.headers, body: response.body };
      if (response.ok || response.status === 304 || call.statuses?.includes(response.status) === true) {
        let body: unknown;
        try {
          body = await readBody(response);
        } catch (error) {
          // The time-out or a dropped connection while the body arrives is a network error like one
          // before the headers: retried (with the same Idempotency-Key), then CauriNetworkError. A
          // caller's abort and a body that is not JSON are not.
          if (call.signal?.aborted || error instanceof SyntaxError) throw error;
          const wait = nextDelay(attempt, undefined, this.#policy, this.#random);
          if (wait === null) throw new CauriNetworkError(operation, idempotencyKey, error);
          await this.wait(wait, call.signal);
          continue;
        }
        return { status: response.status, headers: response.headers, body };
      }
      if (response.status === 401 && token !== undefined && !refreshedAfter401) {
        // The token expired early or was revoked: one new token, one more try (not counted as an attempt).
        refreshedAfter401 = true;
        await response.body?.cancel();
        if (this.#token?.value === token) this.#token = null;
        attempt--;
        continue;
      }
      const error = await apiError(response, operation, this.#now());
      call.signal?.throwIfAborted(); // aborted while the error body was read
      if (!isRetryableStatus(response.status, error.retryAfter !== undefined)) throw error;
      const wait = nextDelay(attempt, parseRetryAfter(response.headers.get('retry-after'), this.#now()), this.#policy, this.#random);
      if (wait === null) throw error;
      await this.wait(wait, call.signal);
    }
  }
}

/** `promise`, or a rejection with `signal`'s reason as soon as it aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * When and how long to wait before retrying a call. Pure functions: the client passes in the clock
 * and the random source, so every rule here is tested without waiting.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 disables retries. Default 4. */
  maxAttempts: number;
  /** First backoff ceiling; doubles with each failed attempt. Default 250 ms. */
  baseDelayMs: number;
  /** Largest backoff ceiling. Default 20 s. */
  maxDelayMs: number;
  /**
   * A `Retry-After` longer than this is not waited for: the error is thrown at once, so a caller is
   * never parked for minutes by a header. Default 60 s, one rate-limit window.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
});

/**
 * Statuses worth another attempt with the same Idempotency-Key:
 * - 429 `rate_limit_exceeded` and 500 `internal_error` (the spec: "the client retries with the same
 *   Idempotency-Key"; a 500 is not stored by the service, so the retry runs again);
 * - 408 `request_timeout`: the request did not reach the service in time and was not handled (the
 *   service closes that connection; the retry goes out on a new one);
 * - 502, 503, 504 from a gateway or a service that is starting or draining;
 * - 409 `conflict` only when it carries `Retry-After`: the service answers a key whose first request
 *   is still running with 409 and `Retry-After: 1`. Other 409s (cancelling a final order) are final.
 */
export function isRetryableStatus(status: number, hasRetryAfter: boolean): boolean {
  if (status === 409) return hasRetryAfter;
  return status === 408 || status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

/**
 * `Retry-After` in milliseconds (RFC 9110 §10.2.3): either delay-seconds (a run of digits) or an
 * HTTP-date, read against `nowMs`. Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date begins with a day name (IMF-fixdate, and the obsolete RFC 850 and asctime forms);
  // anything else that Date.parse happens to read ("-1", "2026") is not one.
  const at = /^[A-Za-z]/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * Exponential backoff with "equal jitter": after the n-th failed attempt the ceiling is
 * min(maxDelayMs, baseDelayMs * 2^(n-1)) and the wait is uniform in [ceiling/2, ceiling), so
 * clients that failed together do not retry in lock-step, and none retries at once.
 * Precondition: failedAttempts >= 1, random() in [0, 1).
 */
export function backoffDelay(failedAttempts: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempts - 1));
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * How long to wait before the next attempt, or null to give up: the attempts are spent, or the
 * server asked for a longer wait than the policy allows. `Retry-After`, when present, is honoured
 * exactly (the server knows when its window ends); backoff applies otherwise.
 */
export function nextDelay(
  failedAttempts: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number | null {
  if (failedAttempts >= policy.maxAttempts) return null;
  if (retryAfterMs !== undefined) return retryAfterMs > policy.maxRetryAfterMs ? null : retryAfterMs;
  return backoffDelay(failedAttempts, policy, random);
}

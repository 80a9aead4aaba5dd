import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, DEFAULT_RETRY_POLICY, isRetryableStatus, nextDelay, parseRetryAfter } from './retry.js';

test('retryable statuses: 408, 429, 500, 502-504, and 409 only with Retry-After', () => {
  for (const s of [408, 429, 500, 502, 503, 504]) assert.equal(isRetryableStatus(s, false), true, String(s));
  for (const s of [400, 401, 403, 404, 413, 415, 422, 501]) assert.equal(isRetryableStatus(s, true), false, String(s));
  assert.equal(isRetryableStatus(409, true), true, 'same key still running: 409 with Retry-After: 1');
  assert.equal(isRetryableStatus(409, false), false, 'a final order cannot be cancelled: final');
});

test('Retry-After: delay-seconds or an HTTP-date (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  assert.equal(parseRetryAfter('17', now), 17_000);
  assert.equal(parseRetryAfter(' 0 ', now), 0);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:59:00 GMT', now), 0, 'a past date means now');
  for (const bad of [null, undefined, '', '-1', '1.5', 'soon']) assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
});

test('backoff doubles per failed attempt up to the ceiling, with jitter in [ceiling/2, ceiling)', () => {
  const p = DEFAULT_RETRY_POLICY;
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => backoffDelay(n, p, () => 0)),
    [125, 250, 500, 1000],
  );
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => backoffDelay(n, p, () => 0.999999)),
    [249, 499, 999, 1999],
  );
  assert.equal(
    backoffDelay(30, p, () => 0),
    p.maxDelayMs / 2,
    'capped',
  );
  const spread = new Set(Array.from({ length: 50 }, (_, i) => backoffDelay(3, p, () => i / 50)));
  assert.ok(spread.size > 40, 'jitter spreads clients that failed together');
});

test('nextDelay: bounded attempts; Retry-After honoured exactly, refused when longer than the policy allows', () => {
  const p = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
  assert.equal(
    nextDelay(1, 2000, p, () => 0.5),
    2000,
  );
  assert.equal(
    nextDelay(2, undefined, p, () => 0),
    250,
  );
  assert.equal(
    nextDelay(3, 1000, p, () => 0),
    null,
    'the third failure of three: give up',
  );
  assert.equal(
    nextDelay(1, 60_000, p, () => 0),
    60_000,
  );
  assert.equal(
    nextDelay(1, 60_001, p, () => 0),
    null,
    'an hour-long Retry-After is an error, not a hang',
  );
  assert.equal(
    nextDelay(1, undefined, { ...p, maxAttempts: 1 }, () => 0),
    null,
    'maxAttempts 1: no retries',
  );
});

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './types.js';

/**
 * Verification of cauri webhook deliveries, for receivers. Stripe's format (spec, Events, "Signature
 * rules"; docs/webhooks.md):
 *
 *   X-Cauri-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]
 *   v1 = lowercase hex HMAC-SHA-256(key = UTF-8 of the whole secret, `whsec_` included,
 *                                   message = `${t}.` followed by the raw body bytes)
 *
 * The same contract as the service's reference verifier, written independently of it (the SDK does
 * not depend on the server), and checked against the shared vectors and the server's signer.
 */

/** Header names as they reach a Node server (lowercase). */
export const SIGNATURE_HEADER = 'x-cauri-signature';
export const WEBHOOK_IDEMPOTENCY_HEADER = 'x-cauri-idempotency-key';

/** The spec's default: a `t` more than 300 s from now, in either direction, is refused. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookVerificationFailure =
  /** Empty header, an element without `=`, no `t` or more than one `t`. */
  | 'malformed_header'
  /** No `v1=` element (only other schemes, or ` v1` after a space: elements are not trimmed). */
  | 'no_signatures'
  /** `t` is not a run of ASCII digits. */
  | 'timestamp_not_numeric'
  /** Authentic, but `t` is more than the tolerance away from now: a replay or a clock problem. */
  | 'timestamp_outside_tolerance'
  /** No `v1` is the HMAC of this body under this secret: wrong secret, or the body was altered. */
  | 'signature_mismatch';

export type WebhookVerification = { valid: true } | { valid: false; reason: WebhookVerificationFailure };

export interface WebhookVerifyOptions {
  /** Current time in Unix seconds; default the system clock. */
  now?: number;
  /** Seconds allowed between `t` and now, either direction; default 300. */
  toleranceSeconds?: number;
}

const MESSAGES: Readonly<Record<WebhookVerificationFailure, string>> = {
  malformed_header: 'the signature header is malformed',
  no_signatures: 'the signature header has no v1 signature',
  timestamp_not_numeric: 'the signature timestamp is not a number of seconds',
  timestamp_outside_tolerance: 'the signature timestamp is outside the tolerance (replayed, or a clock is wrong)',
  signature_mismatch: 'no signature matches this body and secret',
};

/** Thrown by `parseWebhookEvent`; `reason` is the closed union above. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(readonly reason: WebhookVerificationFailure) {
    super(MESSAGES[reason]);
  }
}

function hmacHex(secret: string, t: string, body: string | Uint8Array): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`, 'utf8');
  if (typeof body === 'string') mac.update(body, 'utf8');
  else mac.update(body);
  return mac.digest('hex');
}

/**
 * Checks a delivery's signature header against the **raw** body (the bytes received, or the string
 * they decode to; never JSON re-serialised) and one endpoint secret. Never throws on input; returns
 * why a delivery is refused. Accepts when any `v1` matches, so during a secret rotation a receiver
 * configured with either secret verifies.
 *
 * Strict where Stripe's SDKs are lenient, as the spec asks: `t` must be digits, a future `t` beyond the
 * tolerance is refused. Signatures are compared in constant time, every candidate, before the
 * timestamp, so `timestamp_outside_tolerance` only ever describes an authentic delivery.
 */
export function verifyWebhookSignature(
  header: string | null | undefined,
  body: string | Uint8Array,
  secret: string,
  options: WebhookVerifyOptions = {},
): WebhookVerification {
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new RangeError(`toleranceSeconds must be a non-negative number, got ${tolerance}`);
  if (header === null || header === undefined || header === '') return { valid: false, reason: 'malformed_header' };

  let t: string | undefined;
  const signatures: string[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq < 0) return { valid: false, reason: 'malformed_header' };
    const name = element.slice(0, eq);
    if (name === 't') {
      if (t !== undefined) return { valid: false, reason: 'malformed_header' };
      t = element.slice(eq + 1);
    } else if (name === 'v1') {
      signatures.push(element.slice(eq + 1));
    }
  }
  if (t === undefined) return { valid: false, reason: 'malformed_header' };
  // At most 15 digits keeps `t` exact as a number for the tolerance arithmetic.
  if (!/^[0-9]{1,15}$/.test(t)) return { valid: false, reason: 'timestamp_not_numeric' };
  if (signatures.length === 0) return { valid: false, reason: 'no_signatures' };

  const expected = Buffer.from(hmacHex(secret, t, body), 'utf8');
  let matched = false;
  for (const candidate of signatures) {
    const given = Buffer.from(candidate, 'utf8');
    // Equal lengths are required by timingSafeEqual; a length says nothing secret.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) return { valid: false, reason: 'signature_mismatch' };

  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > tolerance) return { valid: false, reason: 'timestamp_outside_tolerance' };
  return { valid: true };
}

/**
 * Verifies a delivery and returns its envelope `{ id, type, created_at, data, livemode }`, typed by
 * its `type` (a `switch (event.type)` types `data`); throws `WebhookVerificationError` when it does
 * not verify. Deliveries can repeat: de-duplicate on `id`.
 */
export function parseWebhookEvent(
  body: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  options: WebhookVerifyOptions = {},
): WebhookEvent {
  const result = verifyWebhookSignature(header, body, secret, options);
  if (!result.valid) throw new WebhookVerificationError(result.reason);
  return JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as WebhookEvent;
}

/**
 * A signature header as the service would send it, for testing a receiver: `t` then one `v1` per
 * secret. Precondition: `timestamp` is a non-negative integer of Unix seconds.
 */
export function webhookSignatureHeader(secrets: string | readonly string[], timestamp: number, body: string | Uint8Array): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`timestamp must be a non-negative integer, got ${timestamp}`);
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new RangeError('at least one secret is needed');
  const t = String(timestamp);
  return [`t=${t}`, ...list.map((s) => `v1=${hmacHex(s, t, body)}`)].join(',');
}

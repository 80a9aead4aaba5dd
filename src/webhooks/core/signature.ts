import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures in the Stripe format, as the spec's Events section and docs/webhooks.md define them:
 *
 *   v1     = lowercase hex of HMAC-SHA-256(key = UTF-8 of the whole secret, message = `${t}.` ‖ raw body)
 *   header = `t=<t>,v1=<hex>[,v1=<hex>...]`
 *
 * The key is the secret string itself, `whsec_` prefix included, never base64-decoded: this is
 * what the official Stripe SDKs do, so receivers can verify with them unchanged. (Standard Webhooks
 * and Svix decode the secret instead; the two schemes are not interchangeable.)
 *
 * The message is the exact body bytes that go on the wire. The body is serialised once when the
 * event is stored (see payload.ts) and every attempt signs those same bytes with a new `t`; nothing
 * here ever parses or re-serialises JSON (octokit/webhooks.js#76).
 */

/** The spec's default tolerance: a timestamp more than 300 s from now, either way, is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The only scheme the service signs with and the verifier reads; any other scheme is ignored. */
export const SIGNATURE_SCHEME = 'v1';

export type VerificationFailure =
  /** Empty header, an element without `=`, or no `t` / more than one `t`. */
  | 'malformed_header'
  /** Well-formed, but no `v1=` element (only other schemes, or keys with stray spaces). */
  | 'no_signatures'
  /** `t` is not a run of ASCII digits (no sign, fraction, exponent or whitespace). */
  | 'timestamp_not_numeric'
  /** The signature is authentic but `t` lies more than the tolerance from now, in either direction. */
  | 'timestamp_outside_tolerance'
  /** No `v1` value equals the HMAC of this body under this secret. */
  | 'signature_mismatch';

export type VerificationResult = { valid: true } | { valid: false; reason: VerificationFailure };

export interface VerifyOptions {
  /** The verifier's current time in Unix seconds; defaults to the system clock. */
  now?: number;
  /** Allowed distance between `t` and `now`, in seconds, either direction; default 300. */
  toleranceSeconds?: number;
}

// Keeps `t` within Number.MAX_SAFE_INTEGER so that the tolerance arithmetic below is exact.
const NUMERIC_TIMESTAMP = /^[0-9]{1,15}$/;

function assertTimestamp(timestamp: number): void {
  // A fractional or negative `t` would be signed as text that the verifier then refuses as non-numeric.
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`webhook timestamp must be a non-negative integer of Unix seconds, got ${timestamp}`);
  }
}

function hmacHex(secret: string, timestampText: string, body: string | Uint8Array): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${timestampText}.`, 'utf8');
  if (typeof body === 'string') mac.update(body, 'utf8');
  else mac.update(body);
  return mac.digest('hex');
}

/**
 * The `v1` value for one secret: lowercase hex HMAC-SHA-256 over `${timestamp}.` followed by the
 * body's bytes (a string body is encoded as UTF-8, a byte body is used as is).
 * Precondition: `timestamp` is a non-negative integer number of Unix seconds (RangeError otherwise).
 */
export function signPayload(secret: string, timestamp: number, body: string | Uint8Array): string {
  assertTimestamp(timestamp);
  return hmacHex(secret, String(timestamp), body);
}

/**
 * The signature header of one attempt: `t=<t>` then one `v1=` per secret, in the order given.
 * During the 24 h after a secret rotation the caller passes `[newSecret, oldSecret]`, so that a
 * receiver still configured with either one accepts the delivery.
 * Precondition: at least one secret (RangeError otherwise).
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string | Uint8Array): string {
  if (secrets.length === 0) throw new RangeError('signatureHeader needs at least one secret');
  assertTimestamp(timestamp);
  const t = String(timestamp);
  return [`t=${t}`, ...secrets.map((secret) => `${SIGNATURE_SCHEME}=${hmacHex(secret, t, body)}`)].join(',');
}

/**
 * The spec's reference verifier (Events, "Signature rules").
 *
 * Parsing follows the official SDKs: split on `,`, then each element on its first `=`, with no
 * trimming, so `t=1, v1=…` has an element named ` v1` and yields `no_signatures`. Unlike the SDKs it
 * is strict where they are lenient, because the service never produces such headers:
 * - `t` must be ASCII digits (the SDKs' `parseInt` reads `12abc` as 12);
 * - an element without `=`, or a missing or repeated `t`, makes the header malformed;
 * - a timestamp in the future beyond the tolerance is refused (the SDKs only refuse old ones:
 *   `now - t > tolerance`). The spec says "either direction", so a header cannot be pre-signed.
 * The signed string uses `t` exactly as received, which for any header the service made is
 * `String(timestamp)`.
 *
 * `v1` values are compared as hex text, in constant time per candidate (`timingSafeEqual` on
 * equal-length buffers; a length mismatch reveals only the length, which is public). Uppercase hex
 * therefore does not match, as in the SDKs. The header is accepted when any `v1` matches.
 *
 * The signature is checked before the timestamp, as the SDKs do, so `timestamp_outside_tolerance`
 * means "authentic but stale or early": a replay or a clock problem, not a forgery.
 */
export function verifySignatureHeader(
  header: string,
  body: string | Uint8Array,
  secret: string,
  options: VerifyOptions = {},
): VerificationResult {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError(`toleranceSeconds must be a non-negative number, got ${tolerance}`);
  }
  const now = options.now ?? Math.floor(Date.now() / 1000);

  if (header.length === 0) return { valid: false, reason: 'malformed_header' };
  let timestampText: string | undefined;
  const candidates: string[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq < 0) return { valid: false, reason: 'malformed_header' };
    const key = element.slice(0, eq);
    const value = element.slice(eq + 1);
    if (key === 't') {
      if (timestampText !== undefined) return { valid: false, reason: 'malformed_header' };
      timestampText = value;
    } else if (key === SIGNATURE_SCHEME) {
      candidates.push(value);
    }
    // Any other key (`v0`, a future scheme) is ignored.
  }
  if (timestampText === undefined) return { valid: false, reason: 'malformed_header' };
  if (!NUMERIC_TIMESTAMP.test(timestampText)) return { valid: false, reason: 'timestamp_not_numeric' };
  if (candidates.length === 0) return { valid: false, reason: 'no_signatures' };

  const expected = Buffer.from(hmacHex(secret, timestampText, body), 'utf8');
  let matched = false;
  // Every candidate is compared (no early exit), so the time taken does not depend on which one matched.
  for (const candidate of candidates) {
    const given = Buffer.from(candidate, 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) return { valid: false, reason: 'signature_mismatch' };

  if (Math.abs(now - Number(timestampText)) > tolerance) {
    return { valid: false, reason: 'timestamp_outside_tolerance' };
  }
  return { valid: true };
}

/** Bytes of randomness in an endpoint secret; the documented minimum is 32. */
export const ENDPOINT_SECRET_BYTES = 32;

/** A new endpoint signing secret: `whsec_` + base64url (unpadded) of 32 random bytes, 49 characters. */
export function generateEndpointSecret(): string {
  return `whsec_${randomBytes(ENDPOINT_SECRET_BYTES).toString('base64url')}`;
}

import { createHash } from 'node:crypto';
import { deliveryHeaderNames, type DeliveryHeaderNames } from '../../webhooks/attempt.js';
import { signatureHeader } from '../../webhooks/core/signature.js';
import { describeNetworkError, type IntegratorApi } from './api.js';

/** docs/webhooks.md: each attempt times out after 10 s and follows no redirect; so does a forward. */
const FORWARD_TIMEOUT_MS = 10_000;

/** The delivery headers of a service with the default name: `X-Cauri-Signature`, `Cauri-Webhooks/1.0`. */
export const DEFAULT_HEADER_NAMES: DeliveryHeaderNames = deliveryHeaderNames('cauri');

/**
 * The names of the delivery headers of the service `api` talks to. They carry its name
 * (CAURI_SERVICE_NAME), which is also the `issuer` of its public revocation list; read from there,
 * so that forwarded events carry the headers the service's own deliveries carry. Throws when the
 * service cannot be asked.
 */
export async function serviceHeaderNames(api: IntegratorApi): Promise<DeliveryHeaderNames> {
  const { issuer } = await api.json<{ issuer?: unknown }>('GET', '/v1/kyc/crl');
  if (typeof issuer !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(issuer)) throw new Error('the revocation list names no service');
  return deliveryHeaderNames(issuer);
}

/**
 * A UUID fixed for one event (RFC 9562 §5.8, version 8, from SHA-256 of the event id): forwarding the
 * same event again, after a reconnection say, carries the same `X-Cauri-Idempotency-Key`, as every
 * attempt of one delivery does.
 */
export function forwardIdempotencyKey(eventId: string): string {
  const b = createHash('sha256').update(`cauri-listen:${eventId}`).digest().subarray(0, 16);
  b[6] = 0x80 | ((b[6] as number) & 0x0f);
  b[8] = 0x80 | ((b[8] as number) & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The headers of a webhook delivery of `body`, signed with `secret` at `nowMs`, under the service's header names. */
export function deliveryHeaders(
  secret: string,
  eventId: string,
  body: string,
  nowMs: number,
  names: DeliveryHeaderNames = DEFAULT_HEADER_NAMES,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    [names.signature]: signatureHeader([secret], Math.floor(nowMs / 1000), body),
    [names.idempotency]: forwardIdempotencyKey(eventId),
    'user-agent': names.userAgent,
  };
}

export type ForwardOutcome = { status: number; durationMs: number } | { error: string; durationMs: number };

/** POSTs the envelope, byte for byte, to the local receiver as a webhook delivery would. */
export async function forwardEvent(
  url: string,
  secret: string,
  eventId: string,
  body: string,
  names: DeliveryHeaderNames = DEFAULT_HEADER_NAMES,
): Promise<ForwardOutcome> {
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: deliveryHeaders(secret, eventId, body, Date.now(), names),
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return { status: res.status, durationMs: Date.now() - started };
  } catch (error) {
    return { error: describeNetworkError(error), durationMs: Date.now() - started };
  }
}

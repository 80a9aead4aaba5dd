import { deliveryTrace } from '../events/origin.js';
import type { Clock } from '../lib/clock.js';
import { afterAttempt } from './core/schedule.js';
import { signatureHeader } from './core/signature.js';
import type { Launch } from './core/fan-out.js';
import type { AttemptRecord } from './record.js';
import type { EndpointSecrets } from './secrets.js';
import type { WebhookSender } from './sender.js';
import type { WebhookDeliveryRow } from './webhook.table.js';

/** The names of the service's own delivery headers, from its name: `cauri` gives X-Cauri-Signature and Cauri-Webhooks/1.0. */
export interface DeliveryHeaderNames {
  signature: string;
  idempotency: string;
  userAgent: string;
}

/** The service name as it appears in header names and the user agent: `cauri` gives `Cauri`, `my-broker` gives `My-Broker`. */
export function headerBrand(serviceName: string): string {
  return serviceName
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

export function deliveryHeaderNames(serviceName: string): DeliveryHeaderNames {
  const brand = headerBrand(serviceName);
  return { signature: `x-${serviceName}-signature`, idempotency: `x-${serviceName}-idempotency-key`, userAgent: `${brand}-Webhooks/1.0` };
}

/** What became of a leased delivery: settled without an attempt, or attempted and to be recorded. */
export type AttemptOutcome =
  | {
      kind: 'settled';
      /** The delivery's new state; empty: it stays as it was, due, and only its lease is released. */
      changes: Partial<Pick<WebhookDeliveryRow, 'status' | 'next_attempt_at' | 'updated_at'>>;
      /** Its body could not be found (an error worth logging). */
      bodyMissing: boolean;
    }
  | { kind: 'attempted'; succeeded: boolean; record: AttemptRecord };

export interface AttemptDeps {
  secrets: EndpointSecrets;
  sender: WebhookSender;
  clock: Clock;
  names: DeliveryHeaderNames;
}

/**
 * Sends one leased delivery, holding no transaction: signs its body anew (a fresh `t`, under the
 * endpoint's secret and, during a rotation, its previous one), sends it, and returns the attempt and
 * the delivery's next state to record. A deleted endpoint cancels the delivery; a disabled one leaves
 * it due until the endpoint is enabled again.
 */
export async function attemptDelivery(launch: Launch, deps: AttemptDeps): Promise<AttemptOutcome> {
  const { delivery, endpoint, body, stored, origin } = launch;
  if (endpoint === undefined || endpoint.deleted_at !== null) {
    const now = deps.clock.now().getTime();
    return { kind: 'settled', changes: { status: 'cancelled', next_attempt_at: null, updated_at: now }, bodyMissing: false };
  }
  if (endpoint.disabled === 1 || body === undefined) return { kind: 'settled', changes: {}, bodyMissing: body === undefined };
  const attemptedAt = deps.clock.now().getTime();
  const secrets = [deps.secrets.open(endpoint.id, endpoint.secret_sealed)];
  if (endpoint.previous_secret_sealed !== null && (endpoint.previous_secret_expires_at ?? 0) > attemptedAt) {
    secrets.push(deps.secrets.open(endpoint.id, endpoint.previous_secret_sealed));
  }
  // Signed anew for every attempt (a fresh `t`), over the body bytes stored at fan-out. Each attempt
  // is a span of its own in the trace of the request that caused the event (docs/webhooks.md).
  const trace = deliveryTrace(delivery.event_id, origin);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [deps.names.signature]: signatureHeader(secrets, Math.floor(attemptedAt / 1000), body),
    [deps.names.idempotency]: delivery.idempotency_key,
    'user-agent': deps.names.userAgent,
    traceparent: trace.traceparent,
  };
  if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate;
  if (trace.requestId !== undefined) headers['x-request-id'] = trace.requestId;
  const result = await deps.sender.send({ url: endpoint.url, headers, body });
  const succeeded = result.error === null;
  const next = afterAttempt(delivery, succeeded, attemptedAt);
  const now = deps.clock.now().getTime();
  return {
    kind: 'attempted',
    succeeded,
    record: {
      attemptsBefore: delivery.attempts,
      changes: { ...next, last_attempt_at: attemptedAt, updated_at: now },
      attempt: {
        delivery_id: delivery.id,
        seq: next.attempts,
        attempted_at: attemptedAt,
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        error: result.error,
      },
      // A retry, or a replay of the dead letter, sends these very bytes again.
      message: stored || next.status === 'succeeded' ? null : { event_id: delivery.event_id, body, created_at: now },
    },
  };
}

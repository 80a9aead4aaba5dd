import type { Kysely } from 'kysely';
import { formatTraceparent, newSpanId, parseTraceparent, uuidHexOfId, type RequestTrace } from '../lib/trace-context.js';

/**
 * The API request an event came from, stored with the event (`events.origin`, JSON) so that every
 * webhook delivery of it, however late, can be tied back to that request: its id and the caller's
 * own id, and the request's place in a W3C trace. Events that no request caused (a fill reported by
 * a partner, the daily snapshot) have none.
 */
export interface EventOrigin {
  /** The service's id of the request (`req_...`). */
  request_id: string;
  /** The X-Request-Id the caller sent with it, when well formed. */
  client_request_id?: string;
  /** `traceparent` of the service's span for the request: the parent of each delivery's span. */
  traceparent: string;
  /** The caller's `tracestate`, passed on with the trace. */
  tracestate?: string;
}

export function originOfTrace(trace: RequestTrace): EventOrigin {
  return {
    request_id: trace.requestId,
    ...(trace.clientRequestId === null ? {} : { client_request_id: trace.clientRequestId }),
    traceparent: formatTraceparent(trace.traceId, trace.spanId, trace.flags),
    ...(trace.tracestate === null ? {} : { tracestate: trace.tracestate }),
  };
}

/**
 * The origin of the events recorded in a transaction, by transaction handle. A request sets it
 * around the unit of work it runs in the transaction (`withEventOrigin`), and `recordEvent` reads it:
 * the domain code in between does not carry it. On SQLite the units of several requests share one
 * transaction handle, one after the other (group commit), so the origin is set for one unit and
 * restored after it; a unit of a background job in the same batch finds none.
 */
const ORIGINS = new WeakMap<object, EventOrigin>();

// biome-ignore lint/suspicious/noExplicitAny: any database's transaction; only its identity is used.
export async function withEventOrigin<T>(trx: Kysely<any>, origin: EventOrigin | undefined, work: () => Promise<T>): Promise<T> {
  if (origin === undefined) return work();
  const previous = ORIGINS.get(trx);
  ORIGINS.set(trx, origin);
  try {
    return await work();
  } finally {
    if (previous === undefined) ORIGINS.delete(trx);
    else ORIGINS.set(trx, previous);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: any database's transaction; only its identity is used.
export function eventOriginIn(trx: Kysely<any>): EventOrigin | undefined {
  return ORIGINS.get(trx);
}

/** The headers a webhook delivery adds for its event's origin (docs/webhooks.md, "Tracing"). */
export interface DeliveryTrace {
  traceparent: string;
  tracestate?: string;
  /** The originating request's id as its caller knows it: its own X-Request-Id, else the service's. */
  requestId?: string;
}

/**
 * The trace headers of one delivery attempt: a new span, child of the originating request's span,
 * in that request's trace. An event without an origin (or with an unreadable one) gets a trace of
 * its own, whose id is the event id's UUID, so that every attempt of one event shares a trace.
 */
export function deliveryTrace(eventId: string, origin: string | null | undefined, spanId: string = newSpanId()): DeliveryTrace {
  const parsed = parseOrigin(origin);
  const parent = parsed === null ? null : parseTraceparent(parsed.traceparent);
  if (parsed === null || parent === null) return { traceparent: formatTraceparent(uuidHexOfId(eventId), spanId, '01') };
  return {
    traceparent: formatTraceparent(parent.traceId, spanId, parent.flags),
    ...(parsed.tracestate === undefined ? {} : { tracestate: parsed.tracestate }),
    requestId: parsed.client_request_id ?? parsed.request_id,
  };
}

function parseOrigin(text: string | null | undefined): EventOrigin | null {
  if (text === null || text === undefined) return null;
  try {
    const value = JSON.parse(text) as Partial<EventOrigin> | null;
    return value !== null && typeof value.request_id === 'string' && typeof value.traceparent === 'string' ? (value as EventOrigin) : null;
  } catch {
    return null;
  }
}

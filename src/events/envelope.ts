import { isoMillis } from '../lib/clock.js';

/**
 * The envelope's bytes: the body of every webhook delivery of an event and the `data:` line of its
 * frame in the event stream.
 *
 * The body is produced once, when an event is fanned out, and stored as text before any attempt
 * that needs it from storage (a retry, a replay, a delivery that waited); every attempt then signs
 * and sends those identical bytes (docs/webhooks.md). Nothing downstream may parse and
 * re-serialise it, because a receiver verifies the HMAC over the bytes it received. A first attempt
 * whose worker died before storing its body gets it made again from the stored event by this same
 * function, which gives the same bytes for the same event.
 */

/** The spec's envelope (Events): the same members for every event type. */
export interface Envelope {
  id: string;
  type: string;
  /** Date-time with milliseconds, UTC, trailing `Z`. */
  created_at: string;
  /** A JSON object (never an array, a scalar or null). */
  data: unknown;
  livemode: boolean;
}

/**
 * The exact body bytes (as a string, to be sent as UTF-8): compact JSON with the envelope members in
 * the fixed order `id, type, created_at, data, livemode`, whatever order the caller's object has, so
 * that the same event always looks the same to receivers and in logs. Members of `data` keep their
 * own insertion order, so an event's stored data (parsed by JSON.parse, which keeps that order) gives
 * the same bytes every time it is serialised.
 * Throws a TypeError when `data` is not a plain JSON object, since the spec's envelope requires one
 * and `JSON.stringify` would silently drop an `undefined` member.
 */
export function serializeEnvelope(envelope: Envelope): string {
  const { data } = envelope;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new TypeError('envelope data must be a JSON object');
  }
  return JSON.stringify({
    id: envelope.id,
    type: envelope.type,
    created_at: envelope.created_at,
    data,
    livemode: envelope.livemode,
  });
}

/** A stored event, as the events table holds it: `data` is the JSON text of the envelope's data. */
export interface StoredEvent {
  id: string;
  type: string;
  /** Epoch milliseconds. */
  created_at: number;
  data: string;
  /** 0 or 1. */
  livemode: number;
}

/**
 * The body of a stored event's deliveries: the bytes `serializeEnvelope` gives for its envelope,
 * with the stored `data` text placed as it is rather than parsed and serialised again. The service
 * stores `data` as `JSON.stringify` wrote it, and `JSON.stringify(JSON.parse(text))` gives such text
 * back unchanged (the same members in the same order, the same escapes, the same numbers), so the
 * bytes are the same either way; this way costs no parse. Text that is not a JSON object goes
 * through `serializeEnvelope`, which refuses it.
 */
export function storedEnvelopeBody(event: StoredEvent): string {
  if (event.data.charCodeAt(0) !== 0x7b /* { */) {
    return serializeEnvelope({
      id: event.id,
      type: event.type,
      created_at: isoMillis(event.created_at),
      data: JSON.parse(event.data) as unknown,
      livemode: event.livemode === 1,
    });
  }
  return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"created_at":"${isoMillis(event.created_at)}","data":${event.data},"livemode":${event.livemode === 1}}`;
}

import { encodeUuid } from '../lib/ids.js';

/**
 * Server-Sent Events framing (WHATWG HTML, "Server-sent events", §9.2.5 and §9.2.6), pure.
 *
 * Each event is sent as
 *
 *   id: <evt_...>
 *   event: <type>
 *   data: <the envelope, serialised exactly as a webhook body>
 *
 * followed by a blank line. The envelope is one line of JSON (JSON.stringify never emits a raw line
 * break), so it fits in a single `data:` field and a client reads back the very bytes a webhook
 * receiver would get.
 */

/** A comment line: ignored by every SSE client, it keeps idle proxies from closing the connection. */
export const SSE_PING = ': ping\n\n';

export function sseEvent(id: string, type: string, body: string): string {
  if (/[\r\n]/.test(id) || /[\r\n]/.test(type) || /[\r\n]/.test(body)) throw new RangeError('SSE fields must not contain line breaks');
  return `id: ${id}\nevent: ${type}\ndata: ${body}\n\n`;
}

/**
 * The greatest event id whose UUIDv7 timestamp is `ms`: every id made at or before `ms` sorts at or
 * below it, every id made later sorts above it (TypeIDs compare as strings in time order). The
 * stream uses it as an exclusive-of-the-future bound so that it only reads ids up to a chosen time.
 */
export function lastEventIdAt(ms: number): string {
  const bytes = new Uint8Array(16).fill(0xff);
  const clamped = Math.max(0, Math.floor(ms));
  for (let i = 5; i >= 0; i--) bytes[5 - i] = Math.floor(clamped / 2 ** (8 * i)) % 256;
  return `evt_${encodeUuid(bytes)}`;
}

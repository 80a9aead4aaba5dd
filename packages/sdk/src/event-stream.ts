import { CauriApiError, CauriNetworkError } from './errors.js';
import { isRetryableStatus } from './retry.js';
import { SseParser } from './sse-parser.js';
import type { Transport } from './transport.js';
import type { WebhookEvent } from './types.js';

export interface EventStreamOptions {
  /** Resume after this event id (the last one you handled); default: from now. */
  lastEventId?: string;
  /** Ends the iteration (it then returns normally). */
  signal?: AbortSignal;
}

const PATH = '/v1/events/stream';
/** The service sends a comment every 15 s: this long without a byte means a dead connection. */
const IDLE_MS = 45_000;
/** A connection that ends sooner than this counts as a failure, so a service that hangs up at once is not hammered. */
const HEALTHY_MS = 5_000;

/**
 * Follows `GET /v1/events/stream` (Server-Sent Events) and yields each event's envelope, the same
 * body a webhook delivery of it carries. The stream ends when the access token expires, and a
 * connection can drop or the service restart: it then connects again with a fresh token and resumes
 * after the last event id received, so nothing is skipped or yielded twice. A failed attempt to
 * connect (no answer, 408, 429, 5xx, once the transport's own retries are spent) is tried again
 * after a backoff that grows to the retry policy's ceiling, for as long as it takes; an answer that
 * retrying cannot fix (401 with a new token, 403, 422) is thrown. A `retry:` field of the stream sets
 * the least wait before connecting again.
 */
export async function* followEvents(transport: Transport, options: EventStreamOptions = {}): AsyncGenerator<WebhookEvent, void, undefined> {
  const { signal } = options;
  let lastId = options.lastEventId ?? '';
  let failures = 0;
  /** The server's `retry:`, kept across connections as an EventSource keeps its reconnection time. */
  let reconnectMs = 0;
  // A function, not a narrowed property read: the caller aborts while this generator waits.
  const stopped = (): boolean => signal?.aborted === true;
  while (!stopped()) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal?.addEventListener('abort', stop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const opened = Date.now();
    let reading = false;
    let retryAfterMs = 0;
    const parser = new SseParser(lastId);
    try {
      const { body } = await transport.send('GET', PATH, PATH, undefined, undefined, true, {
        signal: connection.signal,
        accept: 'text/event-stream',
        stream: true,
        ...(lastId === '' ? {} : { headers: { 'last-event-id': lastId } }),
      });
      reading = true;
      const decoder = new TextDecoder();
      idle = setTimeout(stop, IDLE_MS);
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        idle.refresh();
        for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (message.data === '') continue;
          const event = JSON.parse(message.data) as WebhookEvent;
          lastId = message.lastEventId;
          yield event;
        }
        // A block with only an id moves the position too.
        lastId = parser.lastEventId;
      }
    } catch (error) {
      if (stopped()) return;
      // A connection that dropped or fell silent is opened again, and so is one the service could
      // not take yet; what retrying cannot fix is thrown.
      if (error instanceof SyntaxError) throw error;
      if (!reading) {
        if (error instanceof CauriApiError && isRetryableStatus(error.status, error.retryAfter !== undefined))
          retryAfterMs = (error.retryAfter ?? 0) * 1000;
        else if (!(error instanceof CauriNetworkError)) throw error;
      }
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', stop);
      connection.abort();
    }
    if (parser.retryMs !== null) reconnectMs = parser.retryMs;
    failures = reading && Date.now() - opened >= HEALTHY_MS ? 0 : failures + 1;
    try {
      await transport.pause(failures, signal, Math.max(reconnectMs, retryAfterMs));
    } catch (error) {
      if (stopped()) return;
      throw error;
    }
  }
}

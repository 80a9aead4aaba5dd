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
 * connection can drop: either way it reconnects with a fresh token and resumes after the last id
 * received, so nothing is skipped or yielded twice. An answer that retrying cannot fix (401 with a
 * new token, 403, 422) is thrown, as are the last failure once the transport's retries are spent.
 */
export async function* followEvents(transport: Transport, options: EventStreamOptions = {}): AsyncGenerator<WebhookEvent, void, undefined> {
  const { signal } = options;
  let lastId = options.lastEventId ?? null;
  let failures = 0;
  // A function, not a narrowed property read: the caller aborts while this generator waits.
  const stopped = (): boolean => signal?.aborted === true;
  while (!stopped()) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal?.addEventListener('abort', stop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const opened = Date.now();
    let reading = false;
    try {
      const { body } = await transport.send('GET', PATH, PATH, undefined, undefined, true, {
        signal: connection.signal,
        accept: 'text/event-stream',
        stream: true,
        ...(lastId === null ? {} : { headers: { 'last-event-id': lastId } }),
      });
      reading = true;
      const parser = new SseParser();
      const decoder = new TextDecoder();
      idle = setTimeout(stop, IDLE_MS);
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        idle.refresh();
        for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (message.data === '') continue;
          const event = JSON.parse(message.data) as WebhookEvent;
          if (message.id !== null) lastId = message.id;
          yield event;
        }
      }
    } catch (error) {
      if (stopped()) return;
      // A connection that dropped or fell silent is opened again; what the transport gave up on is thrown.
      if (!reading || error instanceof SyntaxError) throw error;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', stop);
      connection.abort();
    }
    failures = Date.now() - opened < HEALTHY_MS ? failures + 1 : 0;
    if (failures > 0 && !stopped()) await transport.pause(failures);
  }
}

interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** The text/event-stream format (HTML Living Standard, 9.2.6), fed with decoded text as it arrives. */
class SseParser {
  #pending = '';
  #id: string | null = null;
  #event = '';
  #data: string[] = [];

  *push(text: string): Generator<SseMessage> {
    this.#pending += text;
    for (let end = this.#pending.indexOf('\n'); end !== -1; end = this.#pending.indexOf('\n')) {
      const line = this.#pending.slice(0, end).replace(/\r$/, '');
      this.#pending = this.#pending.slice(end + 1);
      if (line === '') {
        if (this.#data.length > 0) yield { id: this.#id, event: this.#event || 'message', data: this.#data.join('\n') };
        this.#id = null;
        this.#event = '';
        this.#data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.#data.push(value);
      else if (field === 'id') this.#id = value;
      else if (field === 'event') this.#event = value;
    }
  }
}

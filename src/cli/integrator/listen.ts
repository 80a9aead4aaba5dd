import { setTimeout as delay } from 'node:timers/promises';
import { ApiCallError, type IntegratorApi, UnreachableError, apiErrorOf } from './api.js';
import { say, saySeconds } from '../i18n.js';
import type { DeliveryHeaderNames } from '../../webhooks/attempt.js';
import { DEFAULT_HEADER_NAMES, forwardEvent, serviceHeaderNames } from './forward.js';
import { SseParser, type SseMessage } from './sse-parser.js';

export interface ListenOptions {
  forwardTo: string;
  /** Only these event types are forwarded (null: all). */
  types: ReadonlySet<string> | null;
  secret: string;
  /** Resume after this event id on the first connection too (null: from now). */
  after: string | null;
  /** Called with each event id received, once it has been handled, to remember where listening stopped. */
  received?: (eventId: string) => void;
  signal: AbortSignal;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Reconnection delays: 0.5 s doubling to 30 s, with ±20 % jitter so that many listeners do not retry together. */
export function backoffMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** The server pings every 15 s; silence for this long means the connection is dead without having closed. */
const IDLE_TIMEOUT_MS = 45_000;
/** A connection that ended sooner than this counts as a failure for the backoff (a server that hangs up at once). */
const HEALTHY_CONNECTION_MS = 5_000;

/** Statuses after which trying again may succeed (the service restarting, overloaded or rate limiting). */
function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * `cauri listen`: follows `/v1/events/stream` and forwards each event to a local URL. On a dropped
 * connection it reconnects with backoff and resumes after the last event id it received, so nothing
 * is lost or forwarded twice. Resolves when `signal` aborts; rejects on errors retrying cannot fix
 * (refused credentials, missing scope).
 */
export async function listen(api: IntegratorApi, options: ListenOptions): Promise<void> {
  const { signal, out, err } = options;
  let lastId = options.after;
  let failures = 0;
  let connectedOnce = false;
  // The service's delivery header names, asked once connected (until it answers, the default's).
  let names: DeliveryHeaderNames | null = null;
  /** The stream's `retry:` advice, kept across connections as an EventSource keeps its reconnection time. */
  let reconnectMs = 0;
  while (!signal.aborted) {
    const connection = new AbortController();
    const abort = () => connection.abort();
    signal.addEventListener('abort', abort, { once: true });
    let res: Response;
    try {
      res = await api.send('GET', `/v1/events/stream`, {
        headers: { accept: 'text/event-stream', ...(lastId === null ? {} : { 'last-event-id': lastId }) },
        signal: connection.signal,
      });
    } catch (error) {
      signal.removeEventListener('abort', abort);
      if (signal.aborted) return;
      // Unreachable, or a token exchange the service could not answer yet (429, 5xx: it is starting,
      // overloaded or rate limiting): tried again. Refused credentials are not.
      const transient = error instanceof ApiCallError && retryable(error.status);
      if (!(error instanceof UnreachableError) && !transient) throw error;
      failures++;
      const wait = Math.max(backoffMs(failures), transient ? (error.retryAfterSeconds ?? 0) * 1000 : 0);
      err(`cauri: ${say('listen.retrying', { reason: error.message, seconds: saySeconds(wait), attempt: String(failures) })}`);
      await delay(wait, undefined, { signal }).catch(() => undefined);
      continue;
    }
    if (res.status !== 200) {
      signal.removeEventListener('abort', abort);
      const error = await apiErrorOf(res, 'GET /v1/events/stream');
      if (!retryable(res.status)) throw error;
      failures++;
      const wait = Math.max(backoffMs(failures), Number(res.headers.get('retry-after') ?? 0) * 1000);
      err(`cauri: ${say('listen.retrying', { reason: error.message, seconds: saySeconds(wait), attempt: String(failures) })}`);
      await delay(wait, undefined, { signal }).catch(() => undefined);
      continue;
    }
    out(
      lastId === null
        ? say(connectedOnce ? 'listen.reconnected' : 'listen.connected', { url: api.baseUrl })
        : say(connectedOnce ? 'listen.reconnected.after' : 'listen.connected.after', { url: api.baseUrl, id: lastId }),
    );
    connectedOnce = true;
    names ??= await serviceHeaderNames(api).catch(() => null);
    const opened = Date.now();
    let idle: NodeJS.Timeout | undefined;
    const watchdog = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, IDLE_TIMEOUT_MS);
    };
    let reason = say('listen.closed');
    try {
      watchdog();
      const parser = new SseParser(lastId);
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          watchdog();
          for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
            await handle(message);
            moveTo(message.id);
          }
          // A block with only an id moves the position too.
          moveTo(parser.lastEventId);
        }
      } finally {
        if (parser.retryMs !== null) reconnectMs = parser.retryMs;
      }
    } catch (error) {
      if (signal.aborted) return;
      reason = connection.signal.aborted ? say('listen.idle') : say('listen.dropped', { reason: (error as Error).message });
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', abort);
    }
    if (signal.aborted) return;
    failures = Date.now() - opened < HEALTHY_CONNECTION_MS ? failures + 1 : 0;
    const wait = Math.max(reconnectMs, failures === 0 ? 0 : backoffMs(failures));
    const seconds = saySeconds(wait);
    err(
      `cauri: ${
        lastId === null
          ? say(wait === 0 ? 'listen.reconnecting' : 'listen.reconnecting.in', { reason, seconds })
          : say(wait === 0 ? 'listen.reconnecting.after' : 'listen.reconnecting.inAfter', { reason, seconds, id: lastId })
      }`,
    );
    if (wait > 0) await delay(wait, undefined, { signal }).catch(() => undefined);
  }

  /** Where the next connection resumes: an empty id means none (from now), as for an EventSource. */
  function moveTo(id: string | null): void {
    const next = id === '' ? null : id;
    if (next === lastId) return;
    lastId = next;
    if (next !== null) options.received?.(next);
  }

  async function handle(message: SseMessage): Promise<void> {
    if (message.id === null || message.data === '') return;
    if (options.types !== null && !options.types.has(message.event)) return;
    const outcome = await forwardEvent(options.forwardTo, options.secret, message.id, message.data, names ?? DEFAULT_HEADER_NAMES);
    const result = 'status' in outcome ? `[${outcome.status}]` : `[${say('listen.failed', { error: outcome.error })}]`;
    out(
      `${new Date().toISOString()}  ${message.event.padEnd(14)}  ${message.id}  --> POST ${options.forwardTo} ${result} ${outcome.durationMs}ms`,
    );
  }
}

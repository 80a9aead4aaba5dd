import { lookup as dnsLookup } from 'node:dns/promises';
import { EventEmitter } from 'node:events';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { isPublicAddress } from './core/address.js';

/**
 * The HTTP seam of the delivery worker: one POST per attempt. The default sender uses undici with
 * a DNS lookup that checks every address before the socket connects to it, so a name cannot be
 * re-pointed at a private address between the check and the connection (DNS rebinding).
 */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  /** The exact body bytes, as stored; never re-serialised. */
  body: string;
}

export interface SendResult {
  /** The receiver's HTTP status, or null when no response came. */
  statusCode: number | null;
  /** Why the attempt failed, in words for the delivery log; null on a 2xx. */
  error: string | null;
  durationMs: number;
}

export interface WebhookSender {
  send(request: WebhookRequest): Promise<SendResult>;
  close(): Promise<void>;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Name resolution, injectable so that tests can point a name at any address. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, order: 'verbatim' });

export interface SenderOptions {
  /** Per attempt: connection, request and response together (decisions.md: 10 s). */
  timeoutMs: number;
  /** Refuse private, loopback, link-local and reserved addresses (production, or sandbox when configured). */
  publicOnly: boolean;
  resolve?: Resolver;
}

/** A refusal to connect, raised before any socket exists. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';
}

// Enough of a response body to keep the connection reusable; the rest is not read.
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The `lookup` given to net/tls.connect. The socket connects only to the addresses returned here, so
 * the check and the connection see the same answer. When any address of the name is not public the
 * whole name is refused, rather than filtered: a name that mixes public and private answers is
 * either misconfigured or an attack.
 */
export function guardedLookup(resolve: Resolver, publicOnly: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const family = typeof options.family === 'number' ? options.family : 0;
        const addresses = found.filter((a) => family === 0 || a.family === family);
        if (addresses.length === 0) {
          const error = Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
          callback(error, '', 0);
          return;
        }
        const refused = publicOnly ? addresses.find((a) => !isPublicAddress(a.address)) : undefined;
        if (refused !== undefined) {
          callback(new AddressRefusedError(`${hostname} resolves to ${refused.address}, which is not a public address`), '', 0);
          return;
        }
        if (options.all === true) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, addresses);
        else callback(null, (addresses[0] as ResolvedAddress).address, (addresses[0] as ResolvedAddress).family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

function describe(error: unknown, timeoutMs: number): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  // The most telling error may be a cause (undici wraps socket errors).
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    if (current instanceof AddressRefusedError) return `address refused: ${current.message}`;
    if (current.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
    current = current.cause;
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** The reason an attempt is aborted when its time is up. */
class AttemptTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * One attempt's abort signal. undici takes an EventEmitter as `signal` (documented beside
 * AbortSignal): it listens for `abort` once and reads `reason`.
 */
class AttemptSignal extends EventEmitter {
  aborted = false;
  reason: Error | undefined = undefined;
  /** The attempt has ended; its deadline is skipped. */
  ended = false;

  abort(reason: Error): void {
    if (this.aborted || this.ended) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * The deadlines of the attempts in flight. Every attempt has the same timeout, so deadlines fall due
 * in the order the attempts started: a queue with one timer, armed for its oldest deadline. Ended
 * attempts are dropped from the head as they end (most end in the order they started). An
 * `AbortSignal.timeout` per attempt, with undici's listener on it, cost about 10 µs of the event
 * loop an attempt (an EventTarget, a timer of its own), this a fraction of a microsecond.
 */
class Deadlines {
  readonly #queue: { at: number; signal: AttemptSignal }[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly timeoutMs: number) {}

  start(): AttemptSignal {
    const signal = new AttemptSignal();
    this.#queue.push({ at: performance.now() + this.timeoutMs, signal });
    if (this.#timer === null) this.#arm();
    return signal;
  }

  end(signal: AttemptSignal): void {
    signal.ended = true;
    this.#dropEnded();
  }

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #dropEnded(): void {
    while (this.#queue[this.#head]?.signal.ended === true) this.#head++;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
  }

  #arm(): void {
    const next = this.#queue[this.#head];
    if (next === undefined) return;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, Math.ceil(next.at - performance.now())));
    // The attempt's socket keeps the process alive while the attempt lasts; the timer need not.
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    for (let entry = this.#queue[this.#head]; entry !== undefined && (entry.signal.ended || entry.at <= now); entry = this.#queue[this.#head]) {
      this.#head++;
      entry.signal.abort(new AttemptTimeoutError(`attempt timed out after ${this.timeoutMs} ms`));
    }
    this.#dropEnded();
    this.#arm();
  }
}

export class UndiciSender implements WebhookSender {
  readonly #agent: Agent;
  readonly #options: SenderOptions;
  readonly #deadlines: Deadlines;

  constructor(options: SenderOptions) {
    this.#options = options;
    this.#deadlines = new Deadlines(options.timeoutMs);
    this.#agent = new Agent({
      connect: { lookup: guardedLookup(options.resolve ?? systemResolver, options.publicOnly), timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  async send(webhook: WebhookRequest): Promise<SendResult> {
    const started = performance.now();
    const done = (statusCode: number | null, error: string | null): SendResult => ({ statusCode, error, durationMs: Math.round(performance.now() - started) });
    const { timeoutMs, publicOnly } = this.#options;
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return done(null, 'invalid url');
    }
    // A literal address is connected to without any lookup, so it is checked here.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (publicOnly && isIP(host) !== 0 && !isPublicAddress(host)) {
      return done(null, `address refused: ${host} is not a public address`);
    }
    const signal = this.#deadlines.start();
    try {
      // undici's request() follows no redirect: a 3xx is returned as is and counts as a failure.
      const response = await request(url, { dispatcher: this.#agent, method: 'POST', headers: webhook.headers, body: webhook.body, signal });
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => undefined);
      const status = response.statusCode;
      if (status >= 200 && status < 300) return done(status, null);
      if (status >= 300 && status < 400) {
        const location = response.headers.location;
        return done(status, `redirect not followed${typeof location === 'string' ? ` (Location: ${location.slice(0, 200)})` : ''}`);
      }
      return done(status, `HTTP ${status}`);
    } catch (error) {
      return done(null, describe(error, timeoutMs));
    } finally {
      this.#deadlines.end(signal);
    }
  }

  async close(): Promise<void> {
    this.#deadlines.close();
    await this.#agent.close();
  }
}

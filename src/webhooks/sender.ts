import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Dispatcher } from 'undici';
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
  /** Loads what sending needs, so that the first attempt does not pay for it inside its time-out. */
  prepare(): Promise<void>;
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
  /** Per attempt: connection, request and response together (10 s, docs/webhooks.md). */
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
          // The address itself is not named: the error is shown to the endpoint's client, who would
          // otherwise learn what the deployment's internal names resolve to.
          callback(
            new AddressRefusedError(`${hostname} resolves to an address that is not public (private, loopback, link-local or reserved)`),
            '',
            0,
          );
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

/** Why an attempt's read of the response stops early: the rest of the body is not wanted. */
class ResponseTooLargeError extends Error {}

/**
 * One attempt, as undici's dispatch handler: it keeps the status (and a redirect's Location), reads
 * at most MAX_RESPONSE_BYTES of the body, and settles once, when the response ends, fails or is
 * aborted. Once the status has come, the attempt's outcome is that status whatever happens to the
 * rest of the body (a receiver that accepted the event with a 2xx and then stalled has accepted it).
 * undici's `request()` wraps the same dispatch in a promise and a readable stream for the body, which
 * a sender that discards the body does not need, and that cost the worker CPU on every delivery
 * (docs/performance.md, "Figures behind the code").
 */
class Attempt implements Dispatcher.DispatchHandler {
  /** When the attempt's time is up (performance.now()); set by Deadlines. */
  at = 0;
  /** The attempt has settled; its deadline is skipped. */
  ended = false;
  #controller: Dispatcher.DispatchController | null = null;
  /** The deadline passed before the request reached a socket: it is aborted as soon as it does. */
  #expired: Error | null = null;
  #status: number | null = null;
  #location: string | undefined = undefined;
  #bytes = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly settle: (statusCode: number | null, error: string | null) => void,
  ) {}

  expire(): void {
    if (this.ended) return;
    const reason = new AttemptTimeoutError(`attempt timed out after ${this.timeoutMs} ms`);
    if (this.#controller === null) this.#expired = reason;
    else this.#controller.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#expired !== null) controller.abort(this.#expired);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#status = statusCode;
    const location = headers.location;
    this.#location = typeof location === 'string' ? location : undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#bytes += chunk.length;
    if (this.#bytes > MAX_RESPONSE_BYTES) controller.abort(new ResponseTooLargeError('response body over the read limit'));
  }

  onResponseEnd(): void {
    this.#end(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#end(error);
  }

  /** The dispatch itself threw (undici reports most errors through onResponseError instead). */
  fail(error: unknown): void {
    this.#end(error instanceof Error ? error : new Error(String(error)));
  }

  #end(error: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    const status = this.#status;
    if (status === null) {
      this.settle(null, describe(error ?? new Error('no response'), this.timeoutMs));
    } else if (status >= 200 && status < 300) {
      this.settle(status, null);
    } else if (status >= 300 && status < 400) {
      const location = this.#location;
      this.settle(status, `redirect not followed${location === undefined ? '' : ` (Location: ${location.slice(0, 200)})`}`);
    } else {
      this.settle(status, `HTTP ${status}`);
    }
  }
}

/**
 * The deadlines of the attempts in flight. Every attempt has the same timeout, so deadlines fall due
 * in the order the attempts started: a queue with one timer, armed for its oldest deadline. Ended
 * attempts are dropped from the head as they end (most end in the order they started). An
 * `AbortSignal.timeout` per attempt, with undici's listener on it, costs the event loop an
 * EventTarget and a timer of its own an attempt; this, a queue entry (docs/performance.md,
 * "Figures behind the code").
 */
class Deadlines {
  readonly #queue: Attempt[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly timeoutMs: number) {}

  start(attempt: Attempt): void {
    attempt.at = performance.now() + this.timeoutMs;
    this.#queue.push(attempt);
    if (this.#timer === null) this.#arm();
  }

  /** After an attempt has ended. */
  ended(): void {
    this.#dropEnded();
  }

  close(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #dropEnded(): void {
    while (this.#queue[this.#head]?.ended === true) this.#head++;
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
    for (
      let attempt = this.#queue[this.#head];
      attempt !== undefined && (attempt.ended || attempt.at <= now);
      attempt = this.#queue[this.#head]
    ) {
      this.#head++;
      attempt.expire();
    }
    this.#dropEnded();
    this.#arm();
  }
}

/** What a URL gives a dispatch, parsed once per URL. */
interface Target {
  origin: string;
  path: string;
  /** Why the URL cannot be sent to, before any connection: invalid, or a literal address refused. */
  refused: string | null;
}

/** Parsed URLs kept at most (16 endpoints per client). */
const MAX_TARGETS = 4096;

export class UndiciSender implements WebhookSender {
  /**
   * Made when a delivery worker starts (or at the first attempt): a process that never delivers (a
   * command, an API process) never loads undici.
   */
  #agent: Agent | undefined;
  #loading: Promise<Agent> | undefined;
  readonly #options: SenderOptions;
  readonly #deadlines: Deadlines;
  readonly #targets = new Map<string, Target>();

  constructor(options: SenderOptions) {
    this.#options = options;
    this.#deadlines = new Deadlines(options.timeoutMs);
  }

  #makeAgent(): Promise<Agent> {
    const options = this.#options;
    this.#loading ??= import('undici').then(({ Agent }) => {
      this.#agent = new Agent({
        connect: { lookup: guardedLookup(options.resolve ?? systemResolver, options.publicOnly), timeout: options.timeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        keepAliveTimeout: 4_000,
      });
      return this.#agent;
    });
    return this.#loading;
  }

  prepare(): Promise<void> {
    return this.#makeAgent().then(() => undefined);
  }

  #target(href: string): Target {
    let target = this.#targets.get(href);
    if (target === undefined) {
      target = { origin: '', path: '', refused: null };
      try {
        const url = new URL(href);
        target.origin = url.origin;
        target.path = `${url.pathname}${url.search}`;
        // A literal address is connected to without any lookup, so it is checked here.
        const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
        if (this.#options.publicOnly && isIP(host) !== 0 && !isPublicAddress(host))
          target.refused = `address refused: ${host} is not a public address`;
      } catch {
        target.refused = 'invalid url';
      }
      if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
      this.#targets.set(href, target);
    }
    return target;
  }

  send(webhook: WebhookRequest): Promise<SendResult> {
    const started = performance.now();
    const target = this.#target(webhook.url);
    const result = (statusCode: number | null, error: string | null): SendResult => ({
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    if (target.refused !== null) return Promise.resolve(result(null, target.refused));
    if (this.#agent === undefined) return this.#makeAgent().then(() => this.send(webhook));
    const agent = this.#agent;
    return new Promise<SendResult>((resolve) => {
      const attempt = new Attempt(this.#options.timeoutMs, (statusCode, error) => {
        resolve(result(statusCode, error));
        this.#deadlines.ended();
      });
      this.#deadlines.start(attempt);
      // A POST is never retried by undici on another connection, and a redirect is not followed (no
      // redirect interceptor): a 3xx is returned as is and counts as a failure.
      try {
        agent.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers: webhook.headers, body: webhook.body }, attempt);
      } catch (error) {
        attempt.fail(error);
      }
    });
  }

  async close(): Promise<void> {
    this.#deadlines.close();
    if (this.#loading !== undefined) await (await this.#loading).close();
  }
}

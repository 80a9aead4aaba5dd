import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { callerRequestId, parseTraceparent, uuidHexOfId } from '../lib/trace-context.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Log = (...args: unknown[]) => void;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger: the pino child carrying the request id is made when a line is first written
 * at an enabled level, not for every request. Fastify makes one child per request, and pino's child
 * serialises its bindings at once, a cost most requests would pay for nothing, since most never log
 * (docs/performance.md, "Figures behind the code"). Every line written carries the request id, as before.
 */
class RequestLogger {
  #child: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: ChildOptions,
  ) {}

  #made(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  #log(level: Level, args: unknown[]): void {
    if (this.#child === null && !isEnabled(this.parent, level)) return;
    const child = this.#made();
    (child[level] as Log).apply(child, args);
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#made().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Record<string, unknown>, options?: ChildOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }
}

function isEnabled(logger: FastifyBaseLogger, level: Level): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined ? true : check.call(logger, level);
}

/**
 * What a request's log lines carry beside its `request_id`: the caller's own well-formed X-Request-Id
 * as `client_request_id`, and, when it came with a valid W3C `traceparent`, the caller's `trace_id`,
 * its span as `parent_span_id` and the service's span for the request as `span_id` (the request id's
 * last 64 bits, as on the webhooks the request causes). Only headers present cost anything.
 */
export function correlationBindings(bindings: Record<string, unknown>, headers: IncomingMessage['headers']): Record<string, unknown> {
  const caller = headers['x-request-id'] === undefined ? null : callerRequestId(headers['x-request-id']);
  const parent = headers.traceparent === undefined ? null : parseTraceparent(headers.traceparent);
  if (caller !== null) bindings.client_request_id = caller;
  if (parent !== null) {
    bindings.trace_id = parent.traceId;
    bindings.parent_span_id = parent.parentId;
    const requestId = bindings.request_id;
    if (typeof requestId === 'string') bindings.span_id = uuidHexOfId(requestId).slice(16);
  }
  return bindings;
}

/** Fastify's `childLoggerFactory`: a RequestLogger in place of an eager pino child. */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: ChildOptions,
  raw?: IncomingMessage,
): FastifyBaseLogger {
  return new RequestLogger(
    logger,
    raw === undefined ? bindings : correlationBindings(bindings, raw.headers),
    options,
  ) as unknown as FastifyBaseLogger;
}

import type { FastifyReply } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';

export const WINDOW_MS = 60_000;

/** Paths that are part of the API (and so rate limited), as opposed to operations and documentation. */
export function isRateLimitedPath(url: string): boolean {
  return url.startsWith('/v1/') || url.startsWith('/.well-known/');
}

/** The start of the fixed one-minute window holding `now`. */
export function windowStartOf(now: number): number {
  return now - (now % WINDOW_MS);
}

/**
 * Counts hits of a key in one window. Implementations: in memory (one process), Redis (shared), and
 * Redis with an in-memory fallback (src/http/rate-limit-redis.ts). A store never lets a request through
 * uncounted: the Redis-backed one counts in memory while Redis cannot answer.
 */
export interface RateLimitStore {
  increment(key: string, windowStart: number): Promise<number>;
  /** The same, answered at once by a store that can (in memory); undefined by one that cannot. */
  incrementNow?(key: string, windowStart: number): number;
  /** The count of a key in a window, without adding to it. */
  count(key: string, windowStart: number): Promise<number>;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
  /** Whether the store is counting in a fallback (metrics); absent for a store that has none. */
  health?(): RateLimitStoreHealth;
  close(): Promise<void>;
}

export interface RateLimitStoreHealth {
  /** Counting in this process's memory because the shared store does not answer. */
  degraded: boolean;
  /** Outages of the shared store since start. */
  outages: number;
}

export class MemoryRateLimitStore implements RateLimitStore {
  #window = 0;
  #counts = new Map<string, number>();

  async increment(key: string, windowStart: number): Promise<number> {
    return this.incrementNow(key, windowStart);
  }

  incrementNow(key: string, windowStart: number): number {
    this.#enter(windowStart);
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count;
  }

  async count(key: string, windowStart: number): Promise<number> {
    return this.countNow(key, windowStart);
  }

  countNow(key: string, windowStart: number): number {
    return windowStart === this.#window ? (this.#counts.get(key) ?? 0) : 0;
  }

  #enter(windowStart: number): void {
    if (windowStart !== this.#window) {
      // Fixed windows: when a new one starts every count of the old one is obsolete.
      this.#window = windowStart;
      this.#counts = new Map();
    }
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** End of the window, Unix seconds. */
  reset: number;
  retryAfter: number;
  exceeded: boolean;
}

/** Where `count` requests stand against `limit` at `now` (Unix milliseconds). */
export function rateLimitState(now: number, count: number, limit: number): RateLimitState {
  const windowEnd = windowStartOf(now) + WINDOW_MS;
  return {
    limit,
    remaining: Math.max(0, limit - count),
    reset: windowEnd / 1000,
    retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    exceeded: count > limit,
  };
}

export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.header('x-ratelimit-limit', state.limit);
  reply.header('x-ratelimit-remaining', state.remaining);
  reply.header('x-ratelimit-reset', state.reset);
}

/** The 429 of a state over its limit; Retry-After in whole seconds, at least 1. */
export function rateLimitExceeded(state: RateLimitState, message: string): ApiError {
  return new ApiError('rate_limit_exceeded', message, { headers: { 'retry-after': String(state.retryAfter) } });
}

/**
 * Fixed one-minute windows per key (a client id, or `ip:<address>` for unauthenticated routes). Every
 * API response carries the three X-RateLimit headers; a request over the limit gets 429 with
 * Retry-After in whole seconds, at least 1.
 */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    readonly limit: number,
    private readonly clock: Clock,
  ) {}

  async consume(key: string): Promise<RateLimitState> {
    const now = this.clock.now().getTime();
    return rateLimitState(now, await this.store.increment(key, windowStartOf(now)), this.limit);
  }

  /** Counts the request, sets the headers, and throws 429 when over the limit. */
  async enforce(reply: FastifyReply, key: string): Promise<void> {
    this.#apply(reply, await this.consume(key));
  }

  /** Sets the headers to where `key` stands, without counting a request. */
  async report(reply: FastifyReply, key: string): Promise<void> {
    const now = this.clock.now().getTime();
    setRateLimitHeaders(reply, rateLimitState(now, await this.store.count(key, windowStartOf(now)), this.limit));
  }

  /**
   * enforce() without waiting, for a store that counts synchronously (in memory): true once done
   * (headers set, or 429 thrown); false, having counted nothing, when the store needs enforce().
   */
  enforceNow(reply: FastifyReply, key: string): boolean {
    if (this.store.incrementNow === undefined) return false;
    const now = this.clock.now().getTime();
    this.#apply(reply, rateLimitState(now, this.store.incrementNow(key, windowStartOf(now)), this.limit));
    return true;
  }

  #apply(reply: FastifyReply, state: RateLimitState): void {
    setRateLimitHeaders(reply, state);
    if (state.exceeded)
      throw rateLimitExceeded(state, `Rate limit of ${state.limit} requests per minute reached; retry in ${state.retryAfter} s`);
  }
}

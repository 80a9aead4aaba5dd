import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';

const WINDOW_MS = 60_000;

/** The start of the fixed one-minute window holding `now`. */
function windowStartOf(now: number): number {
  return now - (now % WINDOW_MS);
}

/** Counts hits of a key in one window. Implementations: in memory (one process) and Redis (shared). */
export interface RateLimitStore {
  increment(key: string, windowStart: number): Promise<number>;
  /** The same, answered at once by a store that can (in memory); undefined by one that cannot. */
  incrementNow?(key: string, windowStart: number): number;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  #window = 0;
  #counts = new Map<string, number>();

  async increment(key: string, windowStart: number): Promise<number> {
    return this.incrementNow(key, windowStart);
  }

  incrementNow(key: string, windowStart: number): number {
    if (windowStart !== this.#window) {
      // Fixed windows: when a new one starts every count of the old one is obsolete.
      this.#window = windowStart;
      this.#counts = new Map();
    }
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}

/** One INCR per request on `<prefix><key>:<window>`, expiring after the window, shared by every process. */
export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'cauri:rl:',
  ) {}

  async increment(key: string, windowStart: number): Promise<number> {
    const name = `${this.prefix}${key}:${windowStart}`;
    const results = await this.redis.multi().incr(name).pexpire(name, WINDOW_MS * 2).exec();
    const [error, count] = results?.[0] ?? [new Error('no reply from Redis'), null];
    if (error !== null) throw error;
    return Number(count);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** End of the window, Unix seconds. */
  reset: number;
  retryAfter: number;
  exceeded: boolean;
}

/**
 * Fixed one-minute windows per key (a client id, or `ip:<address>` for unauthenticated routes). Every
 * API response carries the three X-RateLimit headers; a request over the limit gets 429 with
 * Retry-After in whole seconds, at least 1.
 */
export class RateLimiter {
  /**
   * When the store fails (Redis unreachable), requests are let through without counting rather than
   * refused: the limit protects the service, and an outage of the counter should not become an outage
   * of the API. `onStoreError` reports it (logs, readiness shows the store as down).
   */
  constructor(
    private readonly store: RateLimitStore,
    readonly limit: number,
    private readonly clock: Clock,
    private readonly onStoreError: (error: unknown) => void = () => {},
  ) {}

  async consume(key: string): Promise<RateLimitState> {
    const now = this.clock.now().getTime();
    return this.#state(now, await this.store.increment(key, windowStartOf(now)));
  }

  #state(now: number, count: number): RateLimitState {
    const windowEnd = windowStartOf(now) + WINDOW_MS;
    return {
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      reset: windowEnd / 1000,
      retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
      exceeded: count > this.limit,
    };
  }

  /** Counts the request, sets the headers, and throws 429 when over the limit. */
  async enforce(reply: FastifyReply, key: string): Promise<void> {
    let state: RateLimitState;
    try {
      state = await this.consume(key);
    } catch (error) {
      this.onStoreError(error);
      return;
    }
    this.#apply(reply, state);
  }

  /**
   * enforce() without waiting, for a store that counts synchronously (in memory): true once done
   * (headers set, or 429 thrown); false, having counted nothing, when the store needs enforce().
   */
  enforceNow(reply: FastifyReply, key: string): boolean {
    if (this.store.incrementNow === undefined) return false;
    const now = this.clock.now().getTime();
    this.#apply(reply, this.#state(now, this.store.incrementNow(key, windowStartOf(now))));
    return true;
  }

  #apply(reply: FastifyReply, state: RateLimitState): void {
    reply.header('x-ratelimit-limit', state.limit);
    reply.header('x-ratelimit-remaining', state.remaining);
    reply.header('x-ratelimit-reset', state.reset);
    if (state.exceeded) {
      throw new ApiError('rate_limit_exceeded', `Rate limit of ${state.limit} requests per minute reached; retry in ${state.retryAfter} s`, {
        headers: { 'retry-after': String(state.retryAfter) },
      });
    }
  }
}

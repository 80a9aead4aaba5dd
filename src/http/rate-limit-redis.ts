import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { MemoryRateLimitStore, WINDOW_MS, type RateLimitStore, type RateLimitStoreHealth } from './rate-limit.js';

/** One INCR per request on `<prefix><key>:<window>`, expiring after the window, shared by every process. */
export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'cauri:rl:',
  ) {}

  async increment(key: string, windowStart: number): Promise<number> {
    const name = `${this.prefix}${key}:${windowStart}`;
    const results = await this.redis
      .multi()
      .incr(name)
      .pexpire(name, WINDOW_MS * 2)
      .exec();
    const [error, count] = results?.[0] ?? [new Error('no reply from Redis'), null];
    if (error !== null) throw error;
    return Number(count);
  }

  async count(key: string, windowStart: number): Promise<number> {
    return Number((await this.redis.get(`${this.prefix}${key}:${windowStart}`)) ?? 0);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export interface OutageEvents {
  /** The shared store stopped answering (called once per outage). */
  onOutage(error: unknown): void;
  /** It answers again, after `outageMs`. */
  onRecovery(outageMs: number): void;
}

/**
 * The shared store while it answers; this process's memory, with the same limits, while it does not.
 * Limits are then held per process (a deployment of N API processes admits at most N times a limit,
 * plus what was counted in Redis earlier in the window) rather than dropped, and no request waits on
 * an unreachable Redis: once a command has failed, requests count in memory at once and Redis is asked
 * again in the background at most once per `probeMs`. Its first answer (or readiness's) ends the outage.
 */
export class FallbackRateLimitStore implements RateLimitStore {
  readonly #local = new MemoryRateLimitStore();
  #outageStart: number | null = null;
  #outages = 0;
  #nextProbe = 0;
  #probing: Promise<void> | null = null;

  constructor(
    private readonly shared: RateLimitStore,
    private readonly events: OutageEvents,
    private readonly probeMs = 1000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  health(): RateLimitStoreHealth {
    return { degraded: this.#outageStart !== null, outages: this.#outages };
  }

  increment(key: string, windowStart: number): Promise<number> {
    return this.#use(
      (store) => store.increment(key, windowStart),
      () => this.#local.incrementNow(key, windowStart),
    );
  }

  count(key: string, windowStart: number): Promise<number> {
    return this.#use(
      (store) => store.count(key, windowStart),
      () => this.#local.countNow(key, windowStart),
    );
  }

  /** Readiness: asks the shared store now; the answer also starts or ends an outage. */
  async ping(): Promise<void> {
    try {
      await this.shared.ping();
    } catch (error) {
      this.#down(error);
      throw error;
    }
    this.#up();
  }

  async close(): Promise<void> {
    await this.#probing;
    await this.shared.close();
  }

  async #use(shared: (store: RateLimitStore) => Promise<number>, local: () => number): Promise<number> {
    if (this.#outageStart !== null) {
      this.#probe();
      return local();
    }
    try {
      return await shared(this.shared);
    } catch (error) {
      this.#down(error);
      return local();
    }
  }

  #probe(): void {
    if (this.#probing !== null || this.now() < this.#nextProbe) return;
    this.#nextProbe = this.now() + this.probeMs;
    this.#probing = this.shared
      .ping()
      .then(
        () => this.#up(),
        () => {},
      )
      .finally(() => {
        this.#probing = null;
      });
  }

  #down(error: unknown): void {
    if (this.#outageStart !== null) return;
    this.#outageStart = this.now();
    this.#nextProbe = this.#outageStart + this.probeMs;
    this.#outages++;
    this.events.onOutage(error);
  }

  #up(): void {
    if (this.#outageStart === null) return;
    const outageMs = this.now() - this.#outageStart;
    this.#outageStart = null;
    this.events.onRecovery(outageMs);
  }
}

/**
 * The rate-limit store of a deployment with `REDIS_URL`. A command fails at once while the connection
 * is down (no offline queue, no retries) and after `commandTimeoutMs` when Redis does not answer (a
 * stalled server, a network partition), so Redis never adds more than that to a request; the store then
 * counts in memory (see FallbackRateLimitStore). Waits up to a second for the first connection, so that
 * the first requests do not count an outage while it opens.
 */
export async function openRedisRateLimitStore(
  url: string,
  commandTimeoutMs: number,
  log: FastifyBaseLogger,
): Promise<FallbackRateLimitStore> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2000,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
  });
  // Reconnection errors repeat while Redis is down; the store logs the outage itself, once.
  redis.on('error', (error: unknown) => log.debug({ err: error }, 'redis connection error'));
  const store = new FallbackRateLimitStore(new RedisRateLimitStore(redis), {
    onOutage: (error) =>
      log.error(
        { err: error },
        'rate-limit store (Redis) unreachable: each process now counts rate limits on its own, in memory, until Redis answers',
      ),
    onRecovery: (outageMs) =>
      log.info({ outage_ms: Math.round(outageMs) }, 'rate-limit store (Redis) answers again: rate limits are shared again'),
  });
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  // Unreachable at start: the outage is reported now rather than by the first request.
  await store.ping().catch(() => {});
  return store;
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import { rateLimitExceeded, rateLimitState, setRateLimitHeaders, windowStartOf, type RateLimitStore } from '../http/rate-limit.js';

export interface CredentialGuardLimits {
  /** Failed credential checks from one address per one-minute window; past it the address is refused. */
  failuresPerAddress: number;
  /** Failed credential checks naming one client id per window; past it each further failure is answered late. */
  failuresPerClient: number;
}

export const FIRST_FAILURE_DELAY_MS = 100;
export const MAX_FAILURE_DELAY_MS = 2000;

/**
 * How long to hold the answer to the `failures`th failed check naming one client id in a window:
 * nothing up to `allowed`, then 100 ms doubling with each further failure, at most 2 s.
 */
export function failureDelayMs(failures: number, allowed: number): number {
  if (failures <= allowed) return 0;
  return Math.min(MAX_FAILURE_DELAY_MS, FIRST_FAILURE_DELAY_MS * 2 ** Math.min(failures - allowed - 1, 16));
}

/** Token requests refused for their credentials, since start (metrics). */
export interface CredentialCheckStats {
  /** 401 at once. */
  rejected: number;
  /** 401 after the brute-force delay. */
  delayed: number;
  /** 429: the address had used up its failed checks; the secret was not checked. */
  blocked: number;
}

/** Registers the count of refused token requests on `registry`, read from `stats` when Prometheus scrapes. */
export function registerCredentialMetrics(registry: Registry, stats: () => CredentialCheckStats): void {
  const authFailures = new Counter({
    name: 'cauri_auth_failures_total',
    help: 'Token requests refused for their client credentials, by outcome: rejected (401 at once), delayed (401 after the brute-force delay), blocked (429: the address had used up its failed checks; nothing was checked).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const s = stats();
      authFailures.reset();
      authFailures.inc({ outcome: 'rejected' }, s.rejected);
      authFailures.inc({ outcome: 'delayed' }, s.delayed);
      authFailures.inc({ outcome: 'blocked' }, s.blocked);
    },
  });
}

/**
 * Limits on failed client authentications at the token endpoint, in buckets of their own: a failure
 * never counts against the client's request limit, which only a verified secret or token reaches.
 *
 * - Per address, strictly: once an address has failed `failuresPerAddress` times in a window, its
 *   token requests are refused (429) until the window ends, before any secret is checked, so that a
 *   refused guess cannot turn out to be right.
 * - Per client id, by delay only: past `failuresPerClient` failures naming an id in a window, each
 *   further wrong secret is answered after a growing delay (failureDelayMs). The right secret is
 *   never delayed or refused on this count, so naming a client id cannot lock its owner out.
 *
 * Counts live in the rate-limit store, shared by every process when it is Redis.
 */
export class CredentialGuard {
  readonly stats: CredentialCheckStats = { rejected: 0, delayed: 0, blocked: 0 };

  constructor(
    private readonly store: RateLimitStore,
    private readonly limits: CredentialGuardLimits,
    private readonly clock: Clock,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {}

  /** Throws 429 when `address` has used up its failed checks in this window. Call before checking a secret. */
  async admit(reply: FastifyReply, address: string): Promise<void> {
    const now = this.clock.now().getTime();
    const failures = await this.store.count(addressKey(address), windowStartOf(now));
    const limit = this.limits.failuresPerAddress;
    if (failures < limit) return;
    this.stats.blocked++;
    const state = rateLimitState(now, failures, limit);
    setRateLimitHeaders(reply, state);
    throw rateLimitExceeded(
      state,
      `Too many failed client authentications from this address (${limit} per minute); retry in ${state.retryAfter} s`,
    );
  }

  /** Counts a failed check against the address and the client id it named; resolves once the delay owed (if any) has passed. */
  async failed(log: FastifyBaseLogger, address: string, clientId: string): Promise<void> {
    const windowStart = windowStartOf(this.clock.now().getTime());
    const [byAddress, byClient] = await Promise.all([
      this.store.increment(addressKey(address), windowStart),
      this.store.increment(clientKey(clientId), windowStart),
    ]);
    // Each crossing is logged once per window (the store's counts are shared, so once per deployment).
    if (byAddress === this.limits.failuresPerAddress) {
      log.warn(
        { address, client_id: clientId, failures: byAddress },
        'failed client authentications: address reached its limit; its token requests are refused until the minute ends',
      );
    }
    if (byClient === this.limits.failuresPerClient + 1) {
      log.warn(
        { address, client_id: clientId, failures: byClient },
        'failed client authentications: client id over its limit; further failures naming it are answered slowly until the minute ends',
      );
    }
    const delay = failureDelayMs(byClient, this.limits.failuresPerClient);
    if (delay === 0) {
      this.stats.rejected++;
      return;
    }
    this.stats.delayed++;
    await this.wait(delay);
  }
}

function addressKey(address: string): string {
  return `authfail:ip:${address}`;
}

function clientKey(clientId: string): string {
  return `authfail:cli:${clientId}`;
}

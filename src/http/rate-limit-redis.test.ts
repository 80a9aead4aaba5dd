import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimitStore } from './rate-limit.js';
import { FallbackRateLimitStore } from './rate-limit-redis.js';

/** A shared store that can be switched off: it answers from a map, or fails every call. */
class SwitchableStore implements RateLimitStore {
  up = true;
  pings = 0;
  readonly counts = new Map<string, number>();

  async increment(key: string, windowStart: number): Promise<number> {
    this.#check();
    const name = `${key}:${windowStart}`;
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    return this.counts.get(name) as number;
  }

  async count(key: string, windowStart: number): Promise<number> {
    this.#check();
    return this.counts.get(`${key}:${windowStart}`) ?? 0;
  }

  async ping(): Promise<void> {
    this.pings++;
    this.#check();
  }

  async close(): Promise<void> {}

  #check(): void {
    if (!this.up) throw new Error('Connection is closed.');
  }
}

test('FallbackRateLimitStore: counts in memory during an outage, reported once, probed at most once per interval', async () => {
  const shared = new SwitchableStore();
  let now = 0;
  const events: string[] = [];
  const store = new FallbackRateLimitStore(
    shared,
    { onOutage: () => events.push('outage'), onRecovery: (ms) => events.push(`recovery after ${ms} ms`) },
    1000,
    () => now,
  );
  const settle = () => new Promise((r) => setImmediate(r));

  assert.equal(await store.increment('cli:a', 0), 1);
  assert.equal(await store.increment('cli:a', 0), 2);
  shared.up = false;
  // The same limits, counted afresh in memory: never uncounted.
  assert.deepEqual([await store.increment('cli:a', 0), await store.increment('cli:a', 0), await store.count('cli:a', 0)], [1, 2, 2]);
  assert.deepEqual(store.health(), { degraded: true, outages: 1 });
  now = 500;
  await store.increment('cli:a', 0);
  await settle();
  assert.equal(shared.pings, 0, 'no probe within the interval');
  now = 1000;
  await Promise.all([store.increment('cli:a', 0), store.increment('cli:a', 0)]);
  await settle();
  assert.equal(shared.pings, 1, 'one probe, in the background, for many requests');
  shared.up = true;
  now = 1500;
  await store.increment('cli:a', 0);
  await settle();
  assert.equal(shared.pings, 1);
  now = 2000;
  assert.equal(await store.increment('cli:a', 0), 7, 'the request that finds the interval over still counts in memory');
  await settle();
  assert.deepEqual(store.health(), { degraded: false, outages: 1 });
  assert.equal(await store.increment('cli:a', 0), 3, 'then Redis counts again, from where it was');
  assert.deepEqual(events, ['outage', 'recovery after 2000 ms']);

  shared.up = false;
  await assert.rejects(store.ping(), /Connection is closed/);
  assert.deepEqual(store.health(), { degraded: true, outages: 2 }, 'readiness starts an outage too');
  shared.up = true;
  await store.ping();
  assert.deepEqual(store.health(), { degraded: false, outages: 2 }, 'and ends it');
  assert.deepEqual(events, ['outage', 'recovery after 2000 ms', 'outage', 'recovery after 0 ms']);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/lib/clock.js';
import { apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { runCli, spawnService } from '../support/process.js';
import { OwnRedis, redisServerAvailable } from '../support/redis-server.js';

const redisUrl = process.env.TEST_REDIS_URL;

test('two service processes share one rate-limit count through Redis', {
  skip: redisUrl === undefined ? 'TEST_REDIS_URL is not set' : false,
}, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-redis-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    REDIS_URL: redisUrl ?? '',
    CAURI_RATE_LIMIT_SANDBOX: '10',
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
    // This test is about sharing the count: a loaded test host must not make one process count alone.
    CAURI_REDIS_TIMEOUT_MS: '1000',
  };
  const created = await runCli(['clients', 'create', '--name', 'shared', '--scopes', 'kyc:read', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const { client_id, client_secret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
  const [a, b] = await Promise.all([spawnService(t, env), spawnService(t, env)]);
  assert.notEqual(a.pid, b.pid);

  // Fixed one-minute windows: start with at least 15 s of the window left so the count cannot restart.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 50));
  const token = (await (
    await fetch(`${a.base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret }),
    })
  ).json()) as { access_token: string };
  const statuses: number[] = [];
  const remaining: string[] = [];
  for (let i = 0; i < 12; i++) {
    const base = i % 2 === 0 ? b.base : a.base;
    const res = await fetch(`${base}/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz`, {
      headers: { authorization: `Bearer ${token.access_token}` },
    });
    statuses.push(res.status);
    remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
    await res.arrayBuffer();
  }
  // One token exchange + 9 reads fill the limit of 10, alternating between the two processes.
  assert.deepEqual(statuses.slice(0, 9), Array(9).fill(404), String(statuses));
  assert.deepEqual(statuses.slice(9), [429, 429, 429]);
  assert.deepEqual(remaining.slice(0, 9), ['8', '7', '6', '5', '4', '3', '2', '1', '0']);
});

const COUNTED_PATH = '/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz';

test('Redis killed, paused and restarted under traffic: limits hold per process, no request waits, readiness says degraded', {
  skip: redisServerAvailable ? false : 'redis-server is not installed',
}, async (t) => {
  const redis = await OwnRedis.start(t);
  const clock = new ManualClock('2026-11-22T10:00:05.000Z');
  const runtime = await startRuntime(t, DATABASES[0]!, { REDIS_URL: redis.url, CAURI_RATE_LIMIT_SANDBOX: '10' }, { clock });
  const base = await listen(runtime);
  const counted = await apiClient(runtime, base, ['kyc:read'], 'counted');
  const busy = await apiClient(runtime, base, ['kyc:read'], 'busy');
  const inspect = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  inspect.on('error', () => {});
  t.after(() => inspect.disconnect());
  const sharedCount = async () => {
    if (inspect.status !== 'ready') await inspect.connect().catch(() => {});
    return inspect.get(`cauri:rl:cli:${counted.clientId}:${clock.now().getTime() - (clock.now().getTime() % 60_000)}`);
  };
  const readiness = async () => (await (await fetch(`${base}/readyz`)).json()) as { status: string; reason?: string };
  const degradedGauge = async () => /^cauri_rate_limit_store_degraded (\d)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1];
  const untilReady = async () => {
    const deadline = Date.now() + 10_000;
    while ((await readiness()).status !== 'ready') {
      assert.ok(Date.now() < deadline, 'readiness did not return to ready after Redis came back');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const timed = async (path: string) => {
    const started = performance.now();
    const res = await counted.call('GET', path);
    await res.arrayBuffer();
    return { res, ms: performance.now() - started };
  };
  /** A fresh window, then `n` requests of the counted client: their statuses and remaining counts. */
  const burst = async (n: number) => {
    clock.advance(60_000);
    const seen: { status: number; remaining: string | null; retryAfter: string | null; ms: number }[] = [];
    for (let i = 0; i < n; i++) {
      const { res, ms } = await timed(COUNTED_PATH);
      seen.push({
        status: res.status,
        remaining: res.headers.get('x-ratelimit-remaining'),
        retryAfter: res.headers.get('retry-after'),
        ms,
      });
    }
    return seen;
  };

  // Traffic from another client all along: no 5xx, every answer counted (headers), none slow.
  const traffic = { stop: false, answers: 0, slowest: 0, statuses: new Set<number>(), uncounted: 0 };
  t.after(() => {
    traffic.stop = true;
  });
  const loop = (async () => {
    while (!traffic.stop) {
      const started = performance.now();
      const res = await busy.call('GET', COUNTED_PATH).catch(() => null);
      if (res === null) break; // the service closed after a failed assertion
      await res.arrayBuffer();
      traffic.slowest = Math.max(traffic.slowest, performance.now() - started);
      traffic.statuses.add(res.status);
      if (res.headers.get('x-ratelimit-limit') === null) traffic.uncounted++;
      traffic.answers++;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();

  // Up: counted in Redis.
  assert.deepEqual(await readiness(), { status: 'ready' });
  assert.deepEqual(
    (await burst(1)).map((s) => [s.status, s.remaining]),
    [[404, '9']],
  );
  assert.equal(await sharedCount(), '1');

  // Killed: connections drop; requests count in memory at once, with the same limit.
  await redis.kill();
  const down = await burst(11);
  assert.deepEqual(
    down.map((s) => s.status),
    [...Array(10).fill(404), 429],
    JSON.stringify(down),
  );
  assert.deepEqual(
    down.map((s) => s.remaining),
    ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0'],
  );
  assert.equal(down[10]?.retryAfter, '55');
  assert.ok(Math.max(...down.map((s) => s.ms)) < 1000, `slowest answer while Redis is down: ${Math.max(...down.map((s) => s.ms))} ms`);
  const degraded = await readiness();
  assert.equal(degraded.status, 'degraded');
  assert.match(degraded.reason ?? '', /^redis unreachable: rate limits are counted by each process on its own/);
  assert.equal(await degradedGauge(), '1');

  // Back (empty): readiness says ready once requests count in Redis again.
  await redis.restart();
  await untilReady();
  assert.deepEqual(
    (await burst(2)).map((s) => [s.status, s.remaining]),
    [
      [404, '9'],
      [404, '8'],
    ],
  );
  assert.equal(await sharedCount(), '2');
  assert.equal(await degradedGauge(), '0');

  // Paused: connections stay open but nothing answers; the command timeout bounds the wait.
  redis.pause();
  const stalled = await burst(3);
  assert.deepEqual(
    stalled.map((s) => [s.status, s.remaining]),
    [
      [404, '9'],
      [404, '8'],
      [404, '7'],
    ],
  );
  assert.ok(
    Math.max(...stalled.map((s) => s.ms)) < 1000,
    `slowest answer while Redis is stalled: ${Math.max(...stalled.map((s) => s.ms))} ms`,
  );
  assert.equal((await readiness()).status, 'degraded');
  redis.resume();
  await untilReady();

  traffic.stop = true;
  await loop;
  assert.ok(traffic.answers > 10, `traffic answers: ${traffic.answers}`);
  assert.deepEqual(
    [...traffic.statuses].filter((s) => s >= 500),
    [],
  );
  assert.equal(traffic.uncounted, 0, 'every answer carried the rate-limit headers');
  assert.ok(traffic.slowest < 1000, `slowest traffic answer: ${traffic.slowest} ms`);
});

test('Redis unreachable from the start: the service starts degraded and still limits', async (t) => {
  // Port 1 on loopback: nothing listens there, connections are refused at once.
  const runtime = await startRuntime(t, DATABASES[0]!, { REDIS_URL: 'redis://127.0.0.1:1', CAURI_RATE_LIMIT_SANDBOX: '2' });
  const base = await listen(runtime);
  const ready = await fetch(`${base}/readyz`);
  assert.equal(ready.status, 200);
  assert.equal(((await ready.json()) as { status: string }).status, 'degraded');
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${base}/v1/sgi/partners`);
    assert.equal(res.headers.get('x-ratelimit-limit'), '2');
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  assert.deepEqual(statuses, [200, 200, 429]);
});

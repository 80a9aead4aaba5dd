import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runCli, spawnService } from '../support/process.js';

const redisUrl = process.env.TEST_REDIS_URL;

test('two service processes share one rate-limit count through Redis', { skip: redisUrl === undefined ? 'TEST_REDIS_URL is not set' : false }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-redis-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    REDIS_URL: redisUrl ?? '',
    CAURI_RATE_LIMIT_SANDBOX: '10',
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
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
    await fetch(`${a.base}/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret }) })
  ).json()) as { access_token: string };
  const statuses: number[] = [];
  const remaining: string[] = [];
  for (let i = 0; i < 12; i++) {
    const base = i % 2 === 0 ? b.base : a.base;
    const res = await fetch(`${base}/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz`, { headers: { authorization: `Bearer ${token.access_token}` } });
    statuses.push(res.status);
    remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
    await res.arrayBuffer();
  }
  // One token exchange + 9 reads fill the limit of 10, alternating between the two processes.
  assert.deepEqual(statuses.slice(0, 9), Array(9).fill(404), String(statuses));
  assert.deepEqual(statuses.slice(9), [429, 429, 429]);
  assert.deepEqual(remaining.slice(0, 9), ['8', '7', '6', '5', '4', '3', '2', '1', '0']);
});

test('with Redis down, readiness says so and API requests are let through uncounted', async (t) => {
  const { DATABASES, listen, startRuntime } = await import('../support/harness.js');
  // Port 1 on loopback: nothing listens there, connections are refused at once.
  const runtime = await startRuntime(t, DATABASES[0]!, { REDIS_URL: 'redis://127.0.0.1:1' });
  const base = await listen(runtime);
  const ready = await fetch(`${base}/readyz`);
  assert.equal(ready.status, 503);
  assert.deepEqual(await ready.json(), { status: 'unavailable', reason: 'redis unreachable' });
  const partners = await fetch(`${base}/v1/sgi/partners`);
  assert.equal(partners.status, 200);
  assert.equal(partners.headers.get('x-ratelimit-limit'), null, 'no count could be taken');
});

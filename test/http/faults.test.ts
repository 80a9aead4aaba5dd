import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runCli, spawnRole, type SpawnedProcess } from '../support/process.js';
import { OwnPostgres } from '../support/own-postgres.js';
import { OwnRedis, redisServerAvailable } from '../support/redis-server.js';
import { eventually, KYC3_REQUEST, OrderLoad, pause } from '../support/order-load.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';

/**
 * Faults under order load, each with real processes over real HTTP on loopback: PostgreSQL crashed
 * and restarted, Redis killed and restarted, one of two service processes killed. In each, every
 * order a client was told about (201) is in the database exactly once afterwards, and no order
 * exists that no client was told about (every unanswered order is retried with its key until it is).
 */

const serverUrl = process.env.TEST_DATABASE_URL;
const PARTNER = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id ?? '';

/** A database of its own on the shared server, dropped when the test ends. */
async function ownDatabase(t: TestContext, url: string): Promise<string> {
  const name = `cauri_fault_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  t.after(async () => {
    // Children are stopped by their own t.after hooks, registered later and so run first.
    await pause(500);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const own = new URL(url);
  own.pathname = `/${name}`;
  return own.href;
}

function baseEnv(t: TestContext, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-fault-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: '',
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_RATE_LIMIT_SANDBOX: '10000000',
    ...extra,
  };
}

/** A client created with the command line (which migrates the database), its token, and an order body. */
async function orderClient(env: Record<string, string>, base: string): Promise<{ clientId: string; token: string; body: string }> {
  const created = await runCli(['clients', 'create', '--name', 'fault load', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const { client_id, client_secret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
  const tokenRes = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret }),
  });
  assert.equal(tokenRes.status, 200);
  const { access_token: token } = (await tokenRes.json()) as { access_token: string };
  const attestationRes = await fetch(`${base}/v1/kyc/attestations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(KYC3_REQUEST),
  });
  assert.equal(attestationRes.status, 201, await attestationRes.clone().text());
  const { id } = (await attestationRes.json()) as { id: string };
  return {
    clientId: client_id,
    token,
    body: JSON.stringify({ rcpt_to: PARTNER, kyc_attestation_id: id, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 }),
  };
}

/** Every order in the database, by id, with its status. */
async function storedOrders(databaseUrl: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; status: string }>('select id, status from orders');
    return new Map(rows.map((r) => [r.id, r.status]));
  } finally {
    await client.end();
  }
}

/** The acknowledged orders are exactly the stored ones: none lost, none twice, none unacknowledged. */
function assertExactlyOnce(load: OrderLoad, stored: Map<string, string>): void {
  const ids = [...load.acknowledged.values()];
  assert.equal(new Set(ids).size, ids.length, 'two keys were acknowledged with one order id');
  const lost = ids.filter((id) => !stored.has(id));
  assert.deepEqual(lost, [], 'acknowledged orders missing from the database');
  const unacknowledged = [...stored.keys()].filter((id) => !ids.includes(id));
  assert.deepEqual(unacknowledged, [], 'orders in the database that no answer acknowledged (a retry created a second order)');
}

test('PostgreSQL crashed and restarted under order load: 503 with Retry-After meanwhile, recovery without a restart of the service, no order lost or doubled', {
  timeout: 120_000,
}, async (t) => {
  const postgres = await OwnPostgres.start(t);
  const databaseUrl = postgres.url();
  const env = baseEnv(t, databaseUrl);
  // The command line migrates the database before the service starts.
  const migrated = await runCli(['migrate'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
  const service = await spawnRole(t, 'all', env);
  const { token, body } = await orderClient(env, service.base);
  const load = new OrderLoad(() => [service.base], token, body);
  load.start(6);
  await eventually(
    async () => load.acknowledged.size >= 10,
    20_000,
    () => `no load before the crash: ${load.summary()} ${load.problems.join('; ')}`,
  );

  await postgres.crash();
  const before = load.acknowledged.size;
  await eventually(
    async () => load.unavailable >= 3,
    15_000,
    () => `no 503 while the database is down: ${load.summary()} ${load.problems.join('; ')}\n${service.output().slice(-4000)}`,
  );
  // Readiness says so too, so a load balancer can take the process out.
  const ready = await fetch(`${service.base}/readyz`);
  assert.equal(ready.status, 503);
  assert.deepEqual(await ready.json(), { status: 'unavailable', reason: 'database unreachable' });
  await pause(1000);

  await postgres.restart();
  await eventually(
    async () => load.acknowledged.size >= before + 15,
    30_000,
    () => `no recovery after the restart: ${load.summary()} ${load.problems.join('; ')}`,
  );
  await load.stop();
  assert.equal(exitedEarly(service), false, 'the service process stayed up');
  assert.deepEqual(load.problems, [], load.summary());
  assert.equal((await fetch(`${service.base}/readyz`)).status, 200);
  assertExactlyOnce(load, await storedOrders(databaseUrl));
});

test('Redis killed and restarted under order load on two API processes: every request answered, rate limits counted per process meanwhile, shared again after', {
  skip: serverUrl === undefined ? 'TEST_DATABASE_URL is not set' : !redisServerAvailable ? 'redis-server is not installed' : false,
  timeout: 120_000,
}, async (t) => {
  const redis = await OwnRedis.start(t);
  const databaseUrl = await ownDatabase(t, serverUrl ?? '');
  // Redis is killed here, not stalled: a generous command time-out keeps a busy machine from
  // counting a slow answer as an outage.
  const env = baseEnv(t, databaseUrl, { REDIS_URL: redis.url, CAURI_RATE_LIMIT_SANDBOX: '1000000', CAURI_REDIS_TIMEOUT_MS: '2000' });
  const migrated = await runCli(['migrate'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
  const [api1, api2] = await Promise.all([spawnRole(t, 'api', env), spawnRole(t, 'api', env)]);
  await spawnRole(t, 'worker', env);
  const { token, body } = await orderClient(env, api1!.base);
  const apis = [api1!.base, api2!.base];
  const load = new OrderLoad(() => apis, token, body);
  load.start(6);

  // A second client, used only to read the rate-limit counts: one request to each process in turn.
  const probe = await orderClient(env, api1!.base);
  const remainingPair = async (): Promise<[number, number]> => {
    for (;;) {
      const answers = [];
      for (const base of apis) {
        const res = await fetch(`${base}/v1/orders?limit=1`, { headers: { authorization: `Bearer ${probe.token}` } });
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        answers.push({ remaining: Number(res.headers.get('x-ratelimit-remaining')), reset: res.headers.get('x-ratelimit-reset') });
      }
      // A new window began between the two: ask again.
      if (answers[0]?.reset === answers[1]?.reset) return [answers[0]!.remaining, answers[1]!.remaining];
    }
  };
  const readiness = async (base: string) => ((await (await fetch(`${base}/readyz`)).json()) as { status: string }).status;

  await eventually(
    async () => load.acknowledged.size >= 10,
    20_000,
    () => `no load: ${load.summary()} ${load.problems.join('; ')}`,
  );
  // Shared: the second process counts on from the first's count.
  const shared = async () => {
    const [first, second] = await remainingPair();
    return second === first - 1;
  };
  await eventually(shared, 10_000, () => 'the two processes do not share one count in Redis');

  await redis.kill();
  const before = load.acknowledged.size;
  await eventually(
    async () => (await readiness(api1!.base)) === 'degraded' && (await readiness(api2!.base)) === 'degraded',
    10_000,
    () => 'readiness did not say degraded',
  );
  await eventually(
    async () => load.acknowledged.size >= before + 15,
    20_000,
    () => `orders stopped while Redis was down: ${load.summary()} ${load.problems.join('; ')}`,
  );
  // Each process counts on its own (docs/production.md): the first's count is not seen by the second.
  const [c, d] = await remainingPair();
  assert.equal(d, c, 'each process counts the client on its own while Redis is down');

  await redis.restart();
  await eventually(
    async () => (await readiness(api1!.base)) === 'ready' && (await readiness(api2!.base)) === 'ready',
    15_000,
    () => 'readiness did not return to ready',
  );
  const after = load.acknowledged.size;
  await eventually(
    async () => load.acknowledged.size >= after + 10,
    20_000,
    () => `no orders after Redis came back: ${load.summary()}`,
  );
  await eventually(shared, 10_000, () => 'the two processes do not share one count in Redis again');
  await load.stop();

  assert.deepEqual(load.problems, [], load.summary());
  assert.deepEqual([...load.statuses.keys()], [201], `every order answered 201 at once: ${load.summary()}`);
  assert.equal(load.connectionErrors, 0);
  assertExactlyOnce(load, await storedOrders(databaseUrl));
});

test('one of two service processes killed (SIGKILL) under order load: the other serves on, takes over the leases, and no order is lost or doubled', {
  skip: serverUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
  timeout: 120_000,
}, async (t) => {
  const databaseUrl = await ownDatabase(t, serverUrl ?? '');
  // Short leases, so that the survivor takes over within seconds.
  const env = baseEnv(t, databaseUrl, { CAURI_LEASE_SECONDS: '3' });
  const migrated = await runCli(['migrate'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
  const [first, second] = await Promise.all([spawnRole(t, 'all', env), spawnRole(t, 'all', env)]);
  const processes = [first!, second!];
  const live = new Set(processes.map((p) => p.base));
  const { token, body } = await orderClient(env, first!.base);
  const load = new OrderLoad(() => [...live], token, body);
  load.start(6);
  await eventually(
    async () => load.acknowledged.size >= 15,
    20_000,
    () => `no load: ${load.summary()} ${load.problems.join('; ')}`,
  );

  // The process that reads the partner's report log (its lease) is the one killed.
  const db = new pg.Client({ connectionString: databaseUrl });
  db.on('error', () => {});
  await db.connect();
  const reportLogHolder = async () =>
    (
      await db.query<{ lease_owner: string | null }>(
        "select lease_owner from connector_positions where connector like 'sandbox%' and lease_until > $1 order by connector limit 1",
        [Date.now()],
      )
    ).rows[0]?.lease_owner ?? null;
  await eventually(
    async () => (await reportLogHolder()) !== null,
    10_000,
    () => 'no process holds the report log',
  );
  const holderPid = Number((await reportLogHolder())?.split('-')[0]);
  const victim = processes.find((p) => p.pid === holderPid);
  assert.ok(victim !== undefined, `the report log's holder ${holderPid} is one of ${processes.map((p) => p.pid).join(', ')}`);
  const survivor = processes.find((p) => p !== victim)!;

  process.kill(victim.pid, 'SIGKILL');
  assert.equal((await victim.exited()).signal, 'SIGKILL');
  const atKill = load.acknowledged.size;
  // Clients notice the dead process by its refused connections and send to the other one.
  live.delete(victim.base);

  await eventually(
    async () => (await reportLogHolder())?.startsWith(`${survivor.pid}-`) === true,
    20_000,
    () => 'the survivor did not take the report log over',
  );
  await eventually(
    async () => load.acknowledged.size >= atKill + 15,
    20_000,
    () => `the survivor does not serve: ${load.summary()} ${load.problems.join('; ')}`,
  );
  await load.stop();
  assert.deepEqual(load.problems, [], load.summary());

  // Every order, including those the killed process had claimed, is handed over and filled by the survivor.
  let stored = new Map<string, string>();
  await eventually(
    async () => {
      stored = await storedOrders(databaseUrl);
      return [...stored.values()].every((status) => status === 'filled');
    },
    30_000,
    () =>
      `orders not filled: ${JSON.stringify(
        Object.entries(Object.fromEntries(stored))
          .filter(([, s]) => s !== 'filled')
          .slice(0, 5),
      )}`,
  );
  await db.end();
  assertExactlyOnce(load, stored);
  assert.equal(exitedEarly(survivor), false);
});

/** True when the process has already exited (it should not have). */
function exitedEarly(child: SpawnedProcess): boolean {
  try {
    process.kill(child.pid, 0);
    return false;
  } catch {
    return true;
  }
}

import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { SANDBOX_PARTNERS } from '../src/partners/sandbox-seed.js';
import { freePort, runNode, spawnServer, type ServerProcess } from './processes.js';

/** A KYC3 request: no monthly cap, so the run measures throughput rather than cap refusals. */
const KYC3_REQUEST = {
  subject_id: 'inv-bench-orders',
  level: 'KYC3',
  jurisdictions: ['UEMOA'],
  verifications: ['id_doc', 'selfie', 'address', 'liveness', 'source_of_funds', 'pep'].map((type) => ({
    type,
    verified_at: '2026-11-20T09:00:00Z',
  })),
};

async function expectJson<T>(res: Response, status: number, what: string): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A token of the client, through the service's own token endpoint. */
export async function exchangeToken(service: string, clientId: string, clientSecret: string): Promise<string> {
  const body = await expectJson<{ access_token: string }>(
    await fetch(`${service}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    }),
    200,
    `token exchange at ${service}`,
  );
  return body.access_token;
}

export interface OrderTarget {
  service: string;
  token: string;
  /** A market buy of one share under a KYC3 attestation (no monthly cap), to a sandbox partner. */
  body: string;
}

/** Issues the attestation an order references and returns the order target of `service`. */
export async function orderFixture(service: string, token: string): Promise<OrderTarget> {
  const attestation = await expectJson<{ id: string }>(
    await fetch(`${service}/v1/kyc/attestations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(KYC3_REQUEST),
    }),
    201,
    'attestation for orders',
  );
  const partner = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'));
  const body = JSON.stringify({ rcpt_to: partner?.id, kyc_attestation_id: attestation.id, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 });
  // One order through the API first: its answer must be a routed order.
  const first = await expectJson<{ status: string }>(
    await fetch(`${service}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body,
    }),
    201,
    'first order',
  );
  if (first.status !== 'routed') throw new Error(`first order answered status ${first.status}, expected routed`);
  return { service, token, body };
}

/**
 * A second service on PostgreSQL, in a database of its own that is dropped afterwards, when
 * BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a server; null otherwise.
 */
export async function startPostgresService(
  baseEnv: Record<string, string>,
  cwd: string,
  servers: ServerProcess[],
  cli: string,
  nodeArgs: string[] = [],
  /** More settings of the service, and its connection string rewritten (to reach the server through a relay). */
  overrides: { env?: Record<string, string>; databaseUrl?: (url: string) => string } = {},
): Promise<{ orders: OrderTarget; drop: () => Promise<void>; pid: number } | null> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') return null;
  const name = `cauri_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const env = { ...baseEnv, ...overrides.env, DATABASE_URL: overrides.databaseUrl?.(url.href) ?? url.href };
  let started: ServerProcess | undefined;
  // Stops the service (when started), then drops its database.
  const drop = async () => {
    await started?.stop();
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
  try {
    const created = JSON.parse(
      await runNode(cli, ['clients', 'create', '--name', 'bench-pg', '--json'], { ...env, LOG_LEVEL: 'silent' }, cwd),
    ) as { client_id: string; client_secret: string };
    const port = await freePort();
    const server = await spawnServer({
      name: 'cauri serve (PostgreSQL)',
      script: cli,
      args: ['serve'],
      env: { ...env, PORT: String(port) },
      cwd,
      nodeArgs,
      timeoutMs: 90_000,
      ready: { kind: 'poll', base: `http://127.0.0.1:${port}`, path: '/readyz' },
    });
    servers.push(server);
    started = server;
    const token = await exchangeToken(server.base, created.client_id, created.client_secret);
    return { orders: await orderFixture(server.base, token), drop, pid: server.pid };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** The scale-out fixture: one process on its own, and two API processes beside a worker process. */
export interface ScaledOutFixture {
  /** `cauri serve --role all`, alone on its database. */
  single: OrderTarget;
  /** The two `cauri serve --role api` processes (one client, one token), beside one `--role worker`. */
  apis: OrderTarget[];
  pids: { single: number; apis: number[]; worker: number };
  drop: () => Promise<void>;
}

/**
 * Two deployments on the PostgreSQL server of BENCH_DATABASE_URL (or TEST_DATABASE_URL) and the Redis
 * of BENCH_REDIS_URL (or TEST_REDIS_URL), each on a database of its own (dropped afterwards): one
 * process that runs everything, and two API processes with one worker process. Null without both.
 */
export async function startScaledOut(
  baseEnv: Record<string, string>,
  cwd: string,
  servers: ServerProcess[],
  cli: string,
): Promise<ScaledOutFixture | null> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (serverUrl === undefined || serverUrl === '' || redisUrl === undefined || redisUrl === '') return null;
  const names = ['single', 'scaled'].map((side) => `cauri_bench_${side}_${randomBytes(4).toString('hex')}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const started: ServerProcess[] = [];
  // Stops the processes started so far, then drops their databases.
  const drop = async () => {
    await Promise.all(started.map((server) => server.stop()));
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
  const envOf = (name: string) => {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    // One public URL for every process of a deployment, as behind its load balancer: a token issued by
    // one API process names it as its audience, and the other accepts it.
    return { ...baseEnv, DATABASE_URL: url.href, REDIS_URL: redisUrl, CAURI_PUBLIC_URL: 'http://127.0.0.1:8080' };
  };
  const start = async (env: Record<string, string>, role: 'all' | 'api', label: string) => {
    const port = await freePort();
    const server = await spawnServer({
      name: `cauri serve --role ${role} (${label})`,
      script: cli,
      args: ['serve', '--role', role],
      env: { ...env, PORT: String(port) },
      cwd,
      ready: { kind: 'poll', base: `http://127.0.0.1:${port}`, path: '/readyz' },
    });
    servers.push(server);
    started.push(server);
    return server;
  };
  const target = async (env: Record<string, string>, base: string, label: string) => {
    const created = JSON.parse(
      await runNode(cli, ['clients', 'create', '--name', `bench-${label}`, '--json'], { ...env, LOG_LEVEL: 'silent' }, cwd),
    ) as { client_id: string; client_secret: string };
    return orderFixture(base, await exchangeToken(base, created.client_id, created.client_secret));
  };
  try {
    const singleEnv = envOf(names[0] as string);
    const single = await start(singleEnv, 'all', 'one process');
    const singleTarget = await target(singleEnv, single.base, 'single');

    const scaledEnv = envOf(names[1] as string);
    // The worker first: it migrates the database, so the API processes start on a migrated one.
    const worker = await spawnServer({
      name: 'cauri serve --role worker',
      script: cli,
      args: ['serve', '--role', 'worker'],
      env: { ...scaledEnv, LOG_LEVEL: 'info' },
      cwd,
      ready: { kind: 'line', pattern: /workers running/ },
    });
    servers.push(worker);
    started.push(worker);
    const apis = await Promise.all([start(scaledEnv, 'api', 'API 1'), start(scaledEnv, 'api', 'API 2')]);
    const first = await target(scaledEnv, (apis[0] as ServerProcess).base, 'scaled');
    return {
      single: singleTarget,
      apis: apis.map((api) => ({ ...first, service: api.base })),
      pids: { single: single.pid, apis: apis.map((api) => api.pid), worker: worker.pid },
      drop,
    };
  } catch (error) {
    await drop();
    throw error;
  }
}

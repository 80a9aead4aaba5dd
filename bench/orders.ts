import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { SANDBOX_PARTNERS } from '../src/partners/sandbox-seed.js';
import { freePort, runNode, spawnServer, type ServerProcess } from './processes.js';
import type { OrderTarget } from './scenarios.js';

/** A KYC3 request: no monthly cap, so the run measures throughput rather than cap refusals. */
const KYC3_REQUEST = {
  subject_id: 'inv-bench-orders',
  level: 'KYC3',
  jurisdictions: ['UEMOA'],
  verifications: ['id_doc', 'selfie', 'address', 'liveness', 'source_of_funds', 'pep'].map((type) => ({ type, verified_at: '2026-11-20T09:00:00Z' })),
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
    await fetch(`${service}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body }),
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
): Promise<{ orders: OrderTarget; drop: () => Promise<void> } | null> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') return null;
  const name = `cauri_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const env = { ...baseEnv, DATABASE_URL: url.href };
  const drop = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
  try {
    const created = JSON.parse(await runNode(cli, ['clients', 'create', '--name', 'bench-pg', '--json'], { ...env, LOG_LEVEL: 'silent' }, cwd)) as { client_id: string; client_secret: string };
    const port = await freePort();
    const server = await spawnServer({ name: 'cauri serve (PostgreSQL)', script: cli, args: ['serve'], env: { ...env, PORT: String(port) }, cwd, timeoutMs: 90_000, ready: { kind: 'poll', base: `http://127.0.0.1:${port}`, path: '/readyz' } });
    servers.push(server);
    const token = await exchangeToken(server.base, created.client_id, created.client_secret);
    return { orders: await orderFixture(server.base, token), drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

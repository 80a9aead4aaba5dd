import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import Stripe from 'stripe';
import { runCli, spawnService, spawnWorker } from '../support/process.js';
import { KYC2_REQUEST } from '../support/api.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

test('scaled out: two API processes and a worker process on PostgreSQL and Redis route, fill and deliver an order', {
  skip: serverUrl === undefined || redisUrl === undefined ? 'TEST_DATABASE_URL and TEST_REDIS_URL are needed' : false,
  timeout: 90_000,
}, async (t) => {
  // A database of its own: the processes are configured by environment, like a deployment.
  const name = `cauri_scale_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-scale-'));
  t.after(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    // Children are stopped by their own t.after hooks, registered later and so run first.
    await new Promise((r) => setTimeout(r, 500));
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const url = new URL(serverUrl ?? '');
  url.pathname = `/${name}`;
  const env = {
    DATABASE_URL: url.href,
    REDIS_URL: redisUrl ?? '',
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_WORKERS: 'none',
  };
  const created = await runCli(['clients', 'create', '--name', 'scale', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const { client_id, client_secret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };

  const received: { body: string; signature: string }[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['x-cauri-signature']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.after(() => receiver.close());
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;

  const [api1, api2] = await Promise.all([spawnService(t, env), spawnService(t, env)]);
  await spawnWorker(t, { ...env, CAURI_WORKERS: 'all' });

  const token = (
    (await (
      await fetch(`${api1.base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id, client_secret }),
      })
    ).json()) as { access_token: string }
  ).access_token;
  const call = (base: string, method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const endpoint = (await (
    await call(api2.base, 'POST', '/v1/webhooks/endpoints', {
      url: receiverUrl,
      events: ['order.created', 'order.routed', 'order.executed'],
    })
  ).json()) as { secret: string };
  const attestation = (await (await call(api1.base, 'POST', '/v1/kyc/attestations', KYC2_REQUEST)).json()) as { id: string };
  const partner = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id;
  const orderRes = await call(api1.base, 'POST', '/v1/orders', {
    rcpt_to: partner,
    kyc_attestation_id: attestation.id,
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 3,
  });
  const order = (await orderRes.json()) as { id: string; status: string };
  assert.equal(orderRes.status, 201);
  assert.equal(order.status, 'routed');

  // The fill comes from the partner a second later; only the worker process applies it.
  let current = { status: '' };
  for (let i = 0; i < 60 && current.status !== 'filled'; i++) {
    await new Promise((r) => setTimeout(r, 250));
    current = (await (await call(api2.base, 'GET', `/v1/orders/${order.id}`)).json()) as { status: string };
  }
  assert.equal(current.status, 'filled', 'filled by the worker process, read from the other API process');

  for (let i = 0; i < 60 && received.length < 3; i++) await new Promise((r) => setTimeout(r, 250));
  const types = received.map((r) => (JSON.parse(r.body) as { type: string }).type).sort();
  assert.deepEqual(types, ['order.created', 'order.executed', 'order.routed']);
  const stripe = new Stripe('sk_test_unused');
  for (const r of received) stripe.webhooks.constructEvent(r.body, r.signature, endpoint.secret);
});

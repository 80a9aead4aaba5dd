import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { openDatabase, type Runtime } from '../../src/app.js';
import { ClientService } from '../../src/auth/client.service.js';
import { parseConfig, type Config } from '../../src/config/config.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Storage } from '../../src/storage/database.js';
import { deriveKey } from '../../src/lib/crypto.js';
import { setPartnerFixCredentials } from '../../src/partners/partner.repository.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { FixCredentialSealer } from '../../src/routing/fix/credentials.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from './api.js';
import { listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from './harness.js';

export type Json = Record<string, any>;

/** Where the partner's gateway is, as the service is told (a gateway, or a proxy in front of it). */
export interface GatewayAddress {
  port: number;
  senderCompId?: string;
  targetCompId?: string;
  heartbeatS?: number;
}

/** The partner a deployment imports: its name, its logon password, and members added to (or replacing) its `fix` settings. */
export interface FixPartnerOptions {
  name?: string;
  password?: string;
  fix?: Json;
}

/**
 * Imports a FIX partner reaching `gateway` in plaintext ("Faults Titres" unless named), with its
 * logon credentials (`cauri-user` and `password`), into the deployment's database; returns its id.
 */
export async function importFixPartner(
  config: Config,
  options: { pgSchema?: string },
  gateway: GatewayAddress,
  partner: FixPartnerOptions = {},
): Promise<string> {
  const storage = await openDatabase(config, options);
  try {
    const fix = {
      host: '127.0.0.1',
      port: gateway.port,
      sender_comp_id: gateway.senderCompId ?? 'CAURI',
      target_comp_id: gateway.targetCompId ?? 'EXEC',
      tls: false,
      account: 'CAURI-TEST',
      ...(gateway.heartbeatS === undefined ? {} : { heartbeat_s: gateway.heartbeatS }),
      ...partner.fix,
    };
    const name = partner.name ?? 'Faults Titres';
    const report = await storage.transact((trx) =>
      importPartners(trx, [{ name, jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix }], {
        now: new Date(),
        fixPlaintextAllowed: true,
      }),
    );
    assert.equal(report.rejected.length, 0, JSON.stringify(report.rejected));
    const partnerId = report.applied[0]?.id ?? '';
    assert.notEqual(partnerId, '', 'the partner was imported');
    const sealer = new FixCredentialSealer(deriveKey(config.masterKey as Buffer, 'fix-credentials'));
    const credentials = { username: 'cauri-user', password: partner.password ?? 's3cret' };
    await storage.transact((trx) => setPartnerFixCredentials(trx, partnerId, sealer.seal(partnerId, credentials), Date.now()));
    return partnerId;
  } finally {
    await storage.close();
  }
}

export interface InProcessDeployment {
  env: TestEnvironment;
  partnerId: string;
  /** Every log line of the runtimes started so far (JSON text), when `logs` was asked for. */
  logs: string[];
  /** Starts a process of the deployment (workers on) in this process; `logon`: wait for the FIX session. */
  start(options?: { logon?: boolean }): Promise<{ runtime: Runtime; api: ApiClient; base: string }>;
}

/**
 * A deployment whose FIX partner reaches `gateway`, run in this process. `logs`: its runtimes log at
 * trace level into `logs`.
 */
export async function fixDeployment(
  t: TestContext,
  database: DatabaseCase,
  gateway: GatewayAddress,
  options: { partner?: FixPartnerOptions; logs?: boolean } = {},
): Promise<InProcessDeployment> {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(line);
      done();
    },
  });
  const env = testEnvironment(
    t,
    database,
    { CAURI_WORKERS: 'all', ...(options.logs === true ? { LOG_LEVEL: 'trace' } : {}) },
    options.logs === true ? { logDestination: destination } : {},
  );
  const partnerId = await importFixPartner(env.config, env.options, gateway, options.partner);
  return {
    env,
    partnerId,
    logs,
    async start(startOptions = {}) {
      const runtime = await startRuntimeIn(t, env);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      // The first logon of a process loads jspurefix and its dictionary: seconds of CPU on a busy machine.
      if (startOptions.logon !== false)
        await waitFor('the FIX session to log on', () => runtime.services.fix.runner(partnerId)?.session != null, 60_000);
      return { runtime, api, base };
    },
  };
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The types of an order's events, oldest first. */
export async function eventsOf(runtime: Runtime, orderId: string): Promise<string[]> {
  const rows = await runtime.storage.db.selectFrom('events').select('type').where('subject_ref', '=', orderId).orderBy('id').execute();
  return rows.map((r) => r.type);
}

/** An order's fills as stored, in order. */
export async function fillsOf(
  runtime: Runtime,
  orderId: string,
): Promise<{ fill_qty: number; fill_price_cents: number; exchange_ref: string }[]> {
  return runtime.storage.db
    .selectFrom('order_fills')
    .select(['fill_qty', 'fill_price_cents', 'exchange_ref'])
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();
}

/** The first group of `pattern` in the service's /metrics, or undefined. */
export async function metric(base: string, pattern: RegExp): Promise<string | undefined> {
  return pattern.exec(await (await fetch(`${base}/metrics`)).text())?.[1];
}

/**
 * Places a limit buy of 10 KOLA.BRVM at 15,000.00 for the partner under a fresh KYC2 attestation,
 * unless `fields` say otherwise (`limit_price_cents: undefined`: a market order); returns the 201's body.
 */
export async function placeOrder(api: Pick<ApiClient, 'post'>, partnerId: string, fields: Json = {}): Promise<Json> {
  const attestation = (await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as Json;
  const res = await api.post('/v1/orders', {
    rcpt_to: partnerId,
    kyc_attestation_id: attestation.id,
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 10,
    limit_price_cents: 1_500_000,
    ...fields,
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as Json;
}

export async function getOrder(api: Pick<ApiClient, 'call'>, id: string): Promise<Json> {
  return (await (await api.call('GET', `/v1/orders/${id}`)).json()) as Json;
}

export async function orderWhen(api: Pick<ApiClient, 'call'>, id: string, status: string, ms = 15_000): Promise<Json> {
  let order: Json = {};
  await waitFor(
    `order ${id} to be ${status}`,
    async () => {
      order = await getOrder(api, id);
      return order.status === status;
    },
    ms,
  );
  return order;
}

/** A client of a service process over HTTP, by its credentials. */
export async function apiAt(base: string, client: { clientId: string; clientSecret: string }): Promise<Pick<ApiClient, 'call' | 'post'>> {
  const res = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { access_token: token } = (await res.json()) as { access_token: string };
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return { call, post: (path, body, key = randomUUID()) => call('POST', path, body, { 'idempotency-key': key }) };
}

export interface ProcessDeployment {
  /** The environment of its service processes (spawnService). */
  env: Record<string, string>;
  partnerId: string;
  client: { clientId: string; clientSecret: string };
  /** A connection of the test's own to the deployment's database, closed after the test. */
  storage: Storage;
}

/**
 * A deployment configured by environment, as its service processes are: a data folder and, on
 * PostgreSQL, a database of its own (created here, dropped after the test); its FIX partner reaches
 * `gateway`; a client of the API.
 */
export async function processDeployment(t: TestContext, database: DatabaseCase, gateway: GatewayAddress): Promise<ProcessDeployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-fix-process-'));
  const env: Record<string, string> = {
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_WORKERS: 'all',
    LOG_LEVEL: 'info',
  };
  let dropDatabase: () => Promise<void> = async () => {};
  if (database.url !== null) {
    const name = `cauri_fix_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    // The server's own URL (or, in a network namespace, its socket's) with the database's name.
    env.DATABASE_URL = database.url.replace(/^(postgres(?:ql)?:\/\/[^/?]*)\/[^?]*/, `$1/${name}`);
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: database.url as string });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const config = parseConfig({ ...env, LOG_LEVEL: 'silent' });
  const partnerId = await importFixPartner(config, {}, gateway);
  const storage = await openDatabase(config);
  const issued = await new ClientService(
    storage.db,
    deriveKey(config.masterKey as Buffer, 'client-secrets'),
    config.mode,
    systemClock,
  ).create('fix faults');
  t.after(async () => {
    // The service processes are stopped by their own hooks; give them a moment to let go.
    await sleep(300);
    await storage.close();
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { env, partnerId, client: { clientId: issued.client_id, clientSecret: issued.client_secret }, storage };
}

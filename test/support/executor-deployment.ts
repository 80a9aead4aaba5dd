import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import { openDatabase, type Runtime } from '../../src/app.js';
import { deriveKey } from '../../src/lib/crypto.js';
import { setPartnerFixCredentials } from '../../src/partners/partner.repository.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { FixCredentialSealer } from '../../src/routing/fix/credentials.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from './api.js';
import { listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from './harness.js';
import { startExecutor, type Executor, type FixMessage } from './quickfix.js';

type Json = Record<string, any>;

/** The Password (554) every deployment here logs on with: tests look for it in the logs. */
export const FIX_PASSWORD = 's3cret-Pa55';

export interface FixDeployment {
  env: TestEnvironment;
  partnerId: string;
  executor: Executor;
  /** Every log line of the runtimes started so far (JSON text), when `logs` was asked for. */
  logs: string[];
  start(): Promise<{ runtime: Runtime; api: ApiClient; base: string }>;
}

/**
 * An executor, and a deployment whose partner "Executor Titres" reaches it over FIX on 127.0.0.1
 * in plaintext, its credentials stored (`cauri-user` / FIX_PASSWORD). `fix` adds to or replaces
 * members of the partner's `fix` settings. `logs`: the runtimes log at trace level into `logs`.
 */
export async function fixDeployment(
  t: TestContext,
  database: DatabaseCase,
  port: number,
  options: { fix?: Json; logs?: boolean; executor?: Parameters<typeof startExecutor>[2]; waitForLogon?: boolean } = {},
): Promise<FixDeployment> {
  const executor = await startExecutor(t, port, options.executor ?? {});
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
  const storage = await openDatabase(env.config, env.options);
  let partnerId: string;
  try {
    const fix = {
      host: '127.0.0.1',
      port: executor.port,
      sender_comp_id: 'CAURI',
      target_comp_id: 'EXEC',
      tls: false,
      account: 'CAURI-TEST',
      ...options.fix,
    };
    const report = await storage.transact((trx) =>
      importPartners(trx, [{ name: 'Executor Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix }], {
        now: new Date(),
        fixPlaintextAllowed: true,
      }),
    );
    assert.equal(report.rejected.length, 0, JSON.stringify(report.rejected));
    partnerId = report.applied[0]?.id ?? '';
    const sealer = new FixCredentialSealer(deriveKey(env.config.masterKey as Buffer, 'fix-credentials'));
    await storage.transact((trx) =>
      setPartnerFixCredentials(trx, partnerId, sealer.seal(partnerId, { username: 'cauri-user', password: FIX_PASSWORD }), Date.now()),
    );
  } finally {
    await storage.close();
  }
  return {
    env,
    partnerId,
    executor,
    logs,
    async start() {
      const runtime = await startRuntimeIn(t, env);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base);
      // The first logon of a process loads jspurefix and its dictionary: seconds of CPU on a busy machine.
      if (options.waitForLogon !== false)
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

/** The executor's log arrives through a pipe, after the messages themselves: wait for what a check reads. */
export const logged = (check: () => boolean) => waitFor("the executor's log", check, 5000);
export const received = (executor: Executor, msgType: string): FixMessage[] =>
  executor.messages().filter((m) => m.direction === 'incoming' && m.fields.get(35) === msgType);
export const sent = (executor: Executor, msgType: string): FixMessage[] =>
  executor.messages().filter((m) => m.direction === 'outgoing' && m.fields.get(35) === msgType);

/** Places an order of 10 KOLA.BRVM to the partner under a fresh KYC2 attestation; returns the 201's body. */
export async function placeOrder(api: ApiClient, partnerId: string, fields: Json): Promise<Json> {
  const attestation = (await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as Json;
  const res = await api.post('/v1/orders', {
    rcpt_to: partnerId,
    kyc_attestation_id: attestation.id,
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 10,
    ...fields,
  });
  assert.equal(res.status, 201);
  return (await res.json()) as Json;
}

export async function orderWhen(api: ApiClient, id: string, status: string, ms = 15_000): Promise<Json> {
  let order: Json = {};
  await waitFor(
    `order ${id} to be ${status}`,
    async () => {
      order = (await (await api.call('GET', `/v1/orders/${id}`)).json()) as Json;
      return order.status === status;
    },
    ms,
  );
  return order;
}

/**
 * A sample's value in a Prometheus text exposition: `name{labels}` with exactly these labels (in any
 * order); 0 when the series is absent.
 */
export function sample(exposition: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const have = (match[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? [];
    if (have.sort().join(',') === wanted) return Number(match[3]);
  }
  return 0;
}

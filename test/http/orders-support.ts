import type { TestContext } from 'node:test';
import type { Runtime } from '../../src/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';
import { type DATABASES, listen, startRuntimeIn, testEnvironment, type TestEnvironment } from '../support/harness.js';

// What the order tests share: the sandbox partners by name, attestations of each level, and a
// service on a manual clock whose router runs when the test says.

export type Json = Record<string, any>;
const partner = (label: string) => {
  const p = SANDBOX_PARTNERS.find((x) => x.name.toLowerCase().startsWith(label));
  if (p?.id === undefined) throw new Error(label);
  return p.id;
};
export const BAOBAB = partner('baobab'); // UEMOA: equities, bonds, opcvm
export const SAHEL = partner('sahel'); // UEMOA: bonds, money_market
export const VOLTA = partner('volta'); // GHANA
export const NIGER = partner('fleuve'); // pending

export const KYC3 = {
  ...KYC2_REQUEST,
  subject_id: 'qualified-1',
  level: 'KYC3',
  jurisdictions: ['UEMOA', 'CEMAC'],
  verifications: [
    ...KYC2_REQUEST.verifications,
    { type: 'source_of_funds', verified_at: '2026-11-20T09:04:00Z' },
    { type: 'pep', verified_at: '2026-11-20T09:05:00Z' },
  ],
};
export const KYC1 = {
  subject_id: 'lite-1',
  level: 'KYC1',
  jurisdictions: ['UEMOA'],
  verifications: KYC2_REQUEST.verifications.slice(0, 2),
};

export interface Ctx {
  runtime: Runtime;
  api: ApiClient;
  clock: ManualClock;
  env: TestEnvironment;
  attestation: (body?: unknown) => Promise<string>;
  order: (body: Json, key?: string) => Promise<{ res: Response; body: Json }>;
  get: (id: string) => Promise<Json>;
  events: (type: string, id?: string) => Promise<Json[]>;
  /** Lets simulated time pass and runs the router once, as its background loop would. */
  tick: (ms: number) => Promise<void>;
}

export async function setup(t: TestContext, database: (typeof DATABASES)[number], env: Record<string, string> = {}): Promise<Ctx> {
  const clock = new ManualClock(new Date());
  const e = testEnvironment(t, database, { CAURI_WORKERS: 'none', ...env }, { clock });
  const runtime = await startRuntimeIn(t, e);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const ctx: Ctx = {
    runtime,
    api,
    clock,
    env: e,
    attestation: async (body = KYC3) => ((await (await api.post('/v1/kyc/attestations', body)).json()) as Json).id,
    order: async (body, key) => {
      const res = await api.post('/v1/orders', body, key);
      return { res, body: (await res.json()) as Json };
    },
    get: async (id) => (await (await api.call('GET', `/v1/orders/${id}`)).json()) as Json,
    events: async (type, id) => {
      let q = runtime.storage.db.selectFrom('events').select(['data', 'type']).where('type', '=', type);
      if (id !== undefined) q = q.where('subject_ref', '=', id);
      return (await q.orderBy('id').execute()).map((r) => JSON.parse(r.data) as Json);
    },
    tick: async (ms) => {
      clock.advance(ms);
      await runtime.services.router.routeDue();
      await runtime.services.router.pollReports();
    },
  };
  return ctx;
}

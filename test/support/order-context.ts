import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { Runtime } from '../../src/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from './api.js';
import { listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from './harness.js';

export type Json = Record<string, any>;

export function sandboxPartner(label: string): string {
  const p = SANDBOX_PARTNERS.find((x) => x.name.toLowerCase().startsWith(label));
  if (p?.id === undefined) throw new Error(label);
  return p.id;
}

/** A KYC3 attestation request (no monthly cap) for UEMOA and CEMAC. */
export const KYC3_REQUEST = {
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

/** Monday 23 November 2026, 10:00 UTC: the BRVM's session is open and closes at 15:00. */
export const MONDAY_10H = '2026-11-23T10:00:00.000Z';

/**
 * A KOLA.BRVM buy limit that rests until cancelled: the lower limit of its price band (15,500 XOF,
 * -7.5 %), which the simulated price (within 1 % of the reference) never comes down to.
 */
export const KOLA_RESTING = 1_433_750;

/** One deployment with its workers off, driven by a manual clock, and a client of it over HTTP. */
export interface OrderContext {
  runtime: Runtime;
  /** The service's base URL on loopback. */
  base: string;
  api: ApiClient;
  clock: ManualClock;
  env: TestEnvironment;
  attestation: (body?: unknown) => Promise<string>;
  order: (body: Json, key?: string) => Promise<{ res: Response; body: Json }>;
  /** A POST that returns its status and JSON body. */
  post: (path: string, body: unknown, key?: string) => Promise<{ status: number; body: Json; replayed: boolean }>;
  get: (id: string) => Promise<Json>;
  /** The stored events of a type (for one order when `id` is given), oldest first. */
  events: (type: string, id?: string) => Promise<Json[]>;
  /** Lets simulated time pass and runs the router once, as its background loop would. */
  tick: (ms: number) => Promise<void>;
}

/**
 * A client of the service whose access token is renewed when the manual clock has moved 10 minutes
 * past its issue (tokens live 15), so that tests can jump to the close of a session or a later day.
 */
async function renewingClient(runtime: Runtime, base: string, clock: ManualClock): Promise<ApiClient> {
  const first = await apiClient(runtime, base);
  let token = first.token;
  let issuedAt = clock.now().getTime();
  const fresh = async () => {
    if (clock.now().getTime() - issuedAt < 10 * 60_000) return token;
    const res = await fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: first.clientId, client_secret: first.clientSecret }),
    });
    token = ((await res.json()) as { access_token: string }).access_token;
    issuedAt = clock.now().getTime();
    return token;
  };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await fresh()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return { ...first, call, post: (path, body, key = randomUUID()) => call('POST', path, body, { 'idempotency-key': key }) };
}

export async function orderContext(
  t: TestContext,
  database: DatabaseCase,
  start: string = MONDAY_10H,
  settings: Record<string, string> = {},
): Promise<OrderContext> {
  const clock = new ManualClock(start);
  const env = testEnvironment(t, database, { CAURI_WORKERS: 'none', ...settings }, { clock });
  const runtime = await startRuntimeIn(t, env);
  const base = await listen(runtime);
  const api = await renewingClient(runtime, base, clock);
  return {
    runtime,
    base,
    api,
    clock,
    env,
    attestation: async (body = KYC3_REQUEST) => ((await (await api.post('/v1/kyc/attestations', body)).json()) as Json).id,
    order: async (body, key) => {
      const res = await api.post('/v1/orders', body, key);
      return { res, body: (await res.json()) as Json };
    },
    post: async (path, body, key) => {
      const res = await api.post(path, body, key);
      return { status: res.status, body: (await res.json()) as Json, replayed: res.headers.get('idempotent-replayed') === 'true' };
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
}

// Helpers shared by the audit snapshot tests (audit*.test.ts).
import { auditLeafHash, attestationDigest, type AuditLeaf } from '@cauri/verifier';
import type { TestContext } from 'node:test';
import { SandboxAnchor } from '../../src/audit/anchors/sandbox-anchor.js';
import { AuditService, type AuditOptions } from '../../src/audit/audit.service.js';
import { SnapshotWorker } from '../../src/workers/snapshot-worker.js';
import type { Runtime } from '../../src/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment, type TestEnvironment } from '../support/harness.js';

export type Json = Record<string, any>;

export const BAOBAB = SANDBOX_PARTNERS.find((p) => p.name.toLowerCase().startsWith('baobab'))!.id as string;
export const KYC3 = {
  ...KYC2_REQUEST,
  subject_id: 'audited-1',
  level: 'KYC3',
  jurisdictions: ['UEMOA'],
  verifications: [
    ...KYC2_REQUEST.verifications,
    { type: 'source_of_funds', verified_at: '2026-11-20T09:04:00Z' },
    { type: 'pep', verified_at: '2026-11-20T09:05:00Z' },
  ],
};

export interface AuditCtx {
  runtime: Runtime;
  base: string;
  clock: ManualClock;
  env: TestEnvironment;
  api: ApiClient;
  worker: SnapshotWorker;
  /** A fresh token for `api` (tokens live 15 minutes; the tests move the clock by days). */
  login(api?: ApiClient): Promise<ApiClient>;
}

export async function auditSetup(
  t: TestContext,
  database: (typeof DATABASES)[number],
  env: Record<string, string> = {},
  start = '2026-11-23T09:00:00.000Z',
): Promise<AuditCtx> {
  const clock = new ManualClock(start);
  const e = testEnvironment(t, database, { CAURI_WORKERS: 'none', ...env }, { clock });
  const runtime = await startRuntimeIn(t, e);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const login = async (who: ApiClient = api): Promise<ApiClient> => {
    const res = await fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: who.clientId, client_secret: who.clientSecret }),
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    return Object.assign(who, {
      token,
      call,
      post: (path: string, body: unknown, key: string = crypto.randomUUID()) => call('POST', path, body, { 'idempotency-key': key }),
    });
  };
  return { runtime, base, clock, env: e, api, worker: new SnapshotWorker(runtime.services.audit, clock, runtime.app.log), login };
}

export async function json(res: Response | Promise<Response>): Promise<{ status: number; body: Json }> {
  const r = await res;
  return { status: r.status, body: (await r.json()) as Json };
}

/** Posts `n` orders one millisecond apart through POST /v1/orders; returns their ids. */
export async function postOrders(c: AuditCtx, api: ApiClient, attestationId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await json(
      api.post('/v1/orders', {
        rcpt_to: BAOBAB,
        kyc_attestation_id: attestationId,
        instrument: 'KOLA.BRVM',
        side: i % 2 ? 'sell' : 'buy',
        qty: 1 + i,
        ...(i % 3 ? { limit_price_cents: 1_500_000 + i } : {}),
      }),
    );
    if (res.status !== 201) throw new Error(`order: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
    c.clock.advance(1);
  }
  return ids;
}

/** The leaf of an order as a client computes it from the API: GET /v1/orders/{id} and the attestation. */
export function clientLeaf(order: Json, attestation: Json): AuditLeaf {
  return {
    id: order.id,
    rcpt_to: order.rcpt_to,
    kyc_attestation_id: order.kyc_attestation_id,
    kyc_attestation_sha256: attestationDigest(attestation),
    instrument: order.instrument,
    side: order.side,
    qty: order.qty,
    limit_price_cents: order.limit_price_cents ?? null,
    created_at: order.created_at,
  };
}

export const leafHashOf = (leaf: AuditLeaf) => auditLeafHash(leaf);

/** A second audit service on the runtime's database with small chunks and pages, to exercise streaming. */
export function smallChunkService(c: AuditCtx, options: Partial<AuditOptions> = {}): AuditService {
  const { storage } = c.runtime;
  return new AuditService(
    storage.db,
    storage.transact,
    c.runtime.services.keys,
    new SandboxAnchor(),
    c.clock,
    { livemode: false, dialect: storage.dialect, chunkSize: 16, pageSize: 37, ...options },
    c.runtime.app.log,
  );
}

export { DATABASES, startRuntimeIn };

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { CauriClient, type CauriClientOptions } from '../client.js';
import type { AttestationRequest } from '../types.js';
import { service, type DatabaseCase, type ManualClock, type Runtime, type Service } from './service.js';

// The set-up of the client's tests: the real service on a manual clock, and clients whose every
// exchange is recorded (and may be answered or failed on the client's side of the wire).

/** One HTTP exchange as the wire saw it (recorded by a wrapping fetch). */
export interface Exchange {
  method: string;
  path: string;
  query: string;
  status: number | 'network_error';
  idempotencyKey: string | null;
  authorization: string | null;
  synthetic: boolean;
}

/** Fault injection on the client's side of the wire: answer or fail an attempt without reaching the server. */
export type Fault = (method: string, path: string) => Response | Error | undefined;

export interface Ctx {
  svc: Service;
  runtime: Runtime;
  clock: ManualClock;
  baseUrl: string;
  credentials: { clientId: string; clientSecret: string };
  log: Exchange[];
  sleeps: number[];
  faults: Fault[];
  client(options?: Partial<CauriClientOptions>): CauriClient;
  kyc2: AttestationRequest;
  baobab: string;
}

/** The service on `db` (default the first of the harness's databases, SQLite). */
export async function setup(t: TestContext, env: Record<string, string> = {}, db?: DatabaseCase): Promise<Ctx> {
  const svc = await service();
  const clock = new svc.ManualClock(new Date());
  const runtime = await svc.startRuntime(t, db ?? svc.DATABASES[0]!, { CAURI_WORKERS: 'none', ...env }, { clock });
  const baseUrl = await svc.listen(runtime);
  const issued = await runtime.services.clients.create('sdk test');
  const log: Exchange[] = [];
  const sleeps: number[] = [];
  const faults: Fault[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    const method = init?.method ?? 'GET';
    const entry = {
      method,
      path: url.pathname,
      query: url.search,
      idempotencyKey: headers.get('idempotency-key'),
      authorization: headers.get('authorization'),
    };
    const fault = faults.shift()?.(method, url.pathname);
    if (fault instanceof Error) {
      log.push({ ...entry, status: 'network_error', synthetic: true });
      throw fault;
    }
    const response = fault ?? (await fetch(input, init));
    log.push({ ...entry, status: response.status, synthetic: fault !== undefined });
    return response;
  };
  const baobab = svc.SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id;
  assert.ok(baobab);
  return {
    svc,
    runtime,
    clock,
    baseUrl,
    credentials: { clientId: issued.client_id, clientSecret: issued.client_secret },
    log,
    sleeps,
    faults,
    kyc2: svc.KYC2_REQUEST as AttestationRequest,
    baobab,
    client: (options = {}) =>
      new CauriClient({
        baseUrl,
        clientId: issued.client_id,
        clientSecret: issued.client_secret,
        fetch: recordingFetch,
        // Waits are recorded, not slept; the tests move the service's clock themselves when needed.
        sleep: async (ms) => {
          sleeps.push(ms);
        },
        random: () => 0.5,
        ...options,
      }),
  };
}

export const calls = (log: Exchange[], method: string, path: string) => log.filter((e) => e.method === method && e.path === path);
export const trace = (log: Exchange[]) => log.map((e) => `${e.method} ${e.path} ${e.status}`);

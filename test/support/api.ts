import { randomUUID } from 'node:crypto';
import type { Runtime } from '../../src/app.js';
import type { Scope } from '../../src/auth/scopes.js';

/** A client of the running service, over real HTTP, with its own credentials and token. */
export interface ApiClient {
  clientId: string;
  clientSecret: string;
  token: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** A mutating POST with a fresh Idempotency-Key (or the given one). */
  post(path: string, body: unknown, idempotencyKey?: string): Promise<Response>;
}

export async function apiClient(runtime: Runtime, base: string, scopes?: Scope[], name = 'test client'): Promise<ApiClient> {
  const issued = await runtime.services.clients.create(name, scopes);
  const res = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: issued.client_id, client_secret: issued.client_secret }),
  });
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${await res.text()}`);
  const { access_token: token } = (await res.json()) as { access_token: string };
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    clientId: issued.client_id,
    clientSecret: issued.client_secret,
    token,
    call,
    post: (path, body, key = randomUUID()) => call('POST', path, body, { 'idempotency-key': key }),
  };
}

export const KYC2_REQUEST = {
  subject_id: 'inv-0001',
  level: 'KYC2',
  jurisdictions: ['UEMOA'],
  verifications: [
    { type: 'id_doc', verified_at: '2026-11-20T09:00:00Z', method: 'ocr' },
    { type: 'selfie', verified_at: '2026-11-20T09:01:00Z' },
    { type: 'address', verified_at: '2026-11-20T09:02:00Z' },
    { type: 'liveness', verified_at: '2026-11-20T09:03:00Z', method: 'video' },
  ],
};

import { randomUUID } from 'node:crypto';
import { SANDBOX_PARTNERS } from '../src/partners/sandbox-seed.js';

/** The subject whose positions the read scenario loads: 10,000 fills over five instruments. */
export const POSITIONS_SUBJECT = 'inv-bench-positions';
export const POSITIONS_FILLS = 10_000;
const INSTRUMENTS = ['KOLA.BRVM', 'TELCI.BRVM', 'CIMSN.BRVM', 'BNKAB.BRVM', 'HUILB.BRVM'];
const CONCURRENCY = 16;

export interface PositionsTarget {
  service: string;
  token: string;
  subject: string;
}

async function expectJson<T>(res: Response, status: number, what: string): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * Gives POSITIONS_SUBJECT its fills through the API, as a client would: one market buy of one share
 * per fill, spread over five instruments, placed CONCURRENCY at a time; then waits until the routing
 * worker has applied every fill (the positions add up to POSITIONS_FILLS shares).
 */
export async function positionsFixture(service: string, token: string, log: (message: string) => void): Promise<PositionsTarget> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const attestation = await expectJson<{ id: string }>(
    await fetch(`${service}/v1/kyc/attestations`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        subject_id: POSITIONS_SUBJECT,
        level: 'KYC3',
        jurisdictions: ['UEMOA'],
        verifications: ['id_doc', 'selfie', 'address', 'liveness', 'source_of_funds', 'pep'].map((type) => ({
          type,
          verified_at: '2026-11-20T09:00:00Z',
        })),
      }),
    }),
    201,
    'attestation for positions',
  );
  const partner = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id;
  const started = Date.now();
  let next = 0;
  const place = async () => {
    for (let i = next++; i < POSITIONS_FILLS; i = next++) {
      const body = JSON.stringify({
        rcpt_to: partner,
        kyc_attestation_id: attestation.id,
        instrument: INSTRUMENTS[i % INSTRUMENTS.length],
        side: 'buy',
        qty: 1,
      });
      await expectJson(
        await fetch(`${service}/v1/orders`, { method: 'POST', headers: { ...headers, 'idempotency-key': randomUUID() }, body }),
        201,
        `order ${i}`,
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, place));
  log(`  ${POSITIONS_FILLS} orders placed in ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for their fills`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    const { data } = await expectJson<{ data: { qty: number }[] }>(
      await fetch(`${service}/v1/positions?subject_id=${POSITIONS_SUBJECT}`, { headers }),
      200,
      'positions',
    );
    const held = data.reduce((n, p) => n + p.qty, 0);
    if (held === POSITIONS_FILLS && data.length === INSTRUMENTS.length) break;
    if (Date.now() > deadline) throw new Error(`positions fixture: ${held} of ${POSITIONS_FILLS} shares filled after 3 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`  ${POSITIONS_FILLS} fills applied after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { service, token, subject: POSITIONS_SUBJECT };
}

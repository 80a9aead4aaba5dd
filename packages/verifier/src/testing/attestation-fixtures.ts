import assert from 'node:assert/strict';
import type { AttestationReason, verifyAttestation } from '../attestation/verify.js';
import { keyDocument, makeKey, signDocument } from './issuer.js';

// The issuer, keys, attestation and revocation lists the attestation and CRL tests verify.

// Two consecutive keys: rotation closed k1's window when k2's opened.
export const k1 = makeKey('k1', '2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z');
export const k2 = makeKey('k2', '2026-06-01T00:00:00Z', null);
export const outsider = makeKey('k1', '2026-01-01T00:00:00Z', null); // same key_id, another key pair
export const doc = keyDocument([k1, k2]);

export const body = {
  id: 'att_01jd8x3v7w2q9h6f5k4m3n2p1r',
  version: '1.0',
  subject_id: 'cust-42:retail',
  level: 'KYC2',
  issued_at: '2026-03-10T12:00:00Z',
  expires_at: '2027-03-10T12:00:00Z',
  issuer: 'cauri',
  verifications: [
    { type: 'id_doc', verified_at: '2026-03-09T10:00:00Z', method: 'ocr' },
    { type: 'selfie', verified_at: '2026-03-09T10:01:00Z' },
    { type: 'address', verified_at: '2026-03-09T10:02:00Z' },
    { type: 'liveness', verified_at: '2026-03-09T10:03:00Z' },
  ],
  jurisdictions: ['UEMOA', 'GHANA'],
};
export const att = signDocument(body, k1);
export const now = new Date('2026-04-01T00:00:00Z');

export function expectReason(result: ReturnType<typeof verifyAttestation>, reason: AttestationReason, label: string = reason): void {
  assert.equal(result.valid, false, label);
  assert.equal(result.reason, reason, `${label}: ${result.valid ? '' : result.message}`);
  if (!result.valid) assert.equal(typeof result.message, 'string');
}

export function crl(
  fields: {
    crl_number: number;
    issued_at: string;
    entries: { attestation_id: string; revoked_at: string; reason: string }[];
    base_crl_number?: number;
  },
  key = k1,
) {
  const next = new Date(Date.parse(fields.issued_at) + 900_000).toISOString().replace('.000Z', 'Z');
  return signDocument({ version: '1.0', issuer: 'cauri', ...fields, next_update: next }, key);
}

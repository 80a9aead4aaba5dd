import { isoSeconds } from '../lib/clock.js';
import { KeyRing } from '../keys/key-ring.js';

export interface KeyDocument {
  version: '1.0';
  issuer: string;
  protocol: 'kyc-attestation/v1';
  keys: { key_id: string; algorithm: 'Ed25519'; public_key: string; valid_from: string; valid_until: string }[];
  crl_endpoint: string;
  contact: string;
}

/**
 * The issuer key document of the specification: every attestation key ever used, with consecutive
 * windows, so that an attestation verifies with the key whose window contains its issued_at.
 */
export async function buildKeyDocument(
  keys: KeyRing,
  options: { issuer: string; publicUrl: string; contact: string },
): Promise<KeyDocument> {
  const all = await keys.all('attestation');
  return {
    version: '1.0',
    issuer: options.issuer,
    protocol: 'kyc-attestation/v1',
    keys: all.map((k) => ({
      key_id: k.id,
      algorithm: 'Ed25519' as const,
      public_key: k.publicKey,
      valid_from: isoSeconds(k.validFrom),
      valid_until: isoSeconds(KeyRing.windowEnd(k)),
    })),
    crl_endpoint: `${options.publicUrl}/v1/kyc/crl`,
    contact: options.contact,
  };
}

// A real issuer for tests: Ed25519 keys from node:crypto, a key document, and
// signing exactly as the spec describes. Test-only; not exported from the package.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { canonicalize } from '../jcs/canonicalize.js';

export interface TestKey {
  key_id: string;
  privateKey: KeyObject;
  public_key: string;
  valid_from: string;
  valid_until: string | null;
}

export function makeKey(key_id: string, valid_from: string, valid_until: string | null): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { key_id, privateKey, public_key: publicKey.export({ format: 'jwk' }).x!, valid_from, valid_until };
}

export function keyDocument(keys: TestKey[], issuer = 'cauri') {
  return {
    version: '1.0',
    issuer,
    protocol: 'kyc-attestation/v1',
    keys: keys.map(({ key_id, public_key, valid_from, valid_until }) => ({
      key_id,
      algorithm: 'Ed25519',
      public_key,
      valid_from,
      valid_until,
    })),
    crl_endpoint: 'https://api.example.test/v1/kyc/crl',
    contact: 'security@example.test',
  };
}

/** Signs `body` (which must not hold `signature`): Ed25519 over UTF-8 RFC 8785, base64url. */
export function signDocument<T extends object>(body: T, key: TestKey, omit: string[] = []): T & { key_id: string; signature: string } {
  const unsigned: Record<string, unknown> = { ...body, key_id: key.key_id };
  const input: Record<string, unknown> = { ...unsigned };
  for (const member of omit) delete input[member];
  const signature = sign(null, Buffer.from(canonicalize(input), 'utf8'), key.privateKey).toString('base64url');
  return { ...(unsigned as T & { key_id: string }), signature };
}

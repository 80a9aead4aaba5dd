import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeBase64url, encodeBase64url } from '../internal/encoding.js';

// Importing a key costs more than a verification, so KeyObjects are cached by their
// base64url text. The cache is bounded because keys may come from untrusted input;
// issuer documents hold a handful of keys, so a full reset when it fills is enough.
const MAX_CACHED_KEYS = 1024;
const keys = new Map<string, KeyObject | null>();

function keyObject(publicKey: string): KeyObject | null {
  const cached = keys.get(publicKey);
  if (cached !== undefined) return cached;
  let key: KeyObject | null = null;
  if (decodeBase64url(publicKey, 32) !== null) {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    } catch {
      key = null;
    }
  }
  if (keys.size >= MAX_CACHED_KEYS) keys.clear();
  keys.set(publicKey, key);
  return key;
}

/**
 * Pure Ed25519 verification (RFC 8032 §5.1.7), as OpenSSL performs it: S must be
 * below the group order L and the point encodings canonical (the "ref10 rule" of
 * C2SP CCTV). `publicKey` is the 32-byte key, raw or as unpadded base64url
 * (RFC 8037 §2 `x`); `signature` is the 64-byte R‖S. Never throws: any malformed
 * input (wrong lengths, bad encoding, not a curve point) gives false.
 */
export function verifyEd25519(publicKey: string | Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (!(message instanceof Uint8Array) || !(signature instanceof Uint8Array)) return false;
    if (signature.byteLength !== 64) return false;
    let text: string;
    if (typeof publicKey === 'string') text = publicKey;
    else if (publicKey instanceof Uint8Array && publicKey.byteLength === 32) text = encodeBase64url(publicKey);
    else return false;
    const key = keyObject(text);
    return key !== null && verify(null, message, key, signature);
  } catch {
    return false;
  }
}

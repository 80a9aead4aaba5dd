// Strict decoders. Node's Buffer decoders skip characters they do not know, so a
// signature with stray characters would decode to the same bytes; a verifier must
// see exactly one encoding per value, hence the alphabet check and the re-encoding
// comparison (which also rejects non-zero trailing bits, RFC 4648 §3.5).

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const LOWER_HEX = /^(?:[0-9a-f]{2})*$/;

/** base64url without padding (RFC 4648 §5, RFC 7515 §2). Returns null unless canonical. */
export function decodeBase64url(text: string, length?: number): Buffer | null {
  if (length !== undefined && text.length !== Math.ceil((length * 4) / 3)) return null;
  if (!BASE64URL.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (length !== undefined && bytes.length !== length) return null;
  return bytes.toString('base64url') === text ? bytes : null;
}

export function encodeBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Lowercase hex only: every hex value in the formats is lowercase (signatures, hashes, Merkle roots). */
export function decodeHex(text: string, length?: number): Buffer | null {
  if (length !== undefined && text.length !== length * 2) return null;
  return LOWER_HEX.test(text) ? Buffer.from(text, 'hex') : null;
}

export function encodeHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

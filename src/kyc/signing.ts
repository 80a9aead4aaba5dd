import { createHash, sign } from 'node:crypto';
import { canonicalize } from '@cauri/verifier';
import type { SigningKey } from '../keys/key-ring.js';
import { signEd25519 } from '../lib/crypto.js';

/**
 * Signs a document the way every signed object of the service is signed (attestations, revocation
 * lists, audit snapshots): Ed25519 (RFC 8032) over the UTF-8 bytes of the RFC 8785 canonical form of
 * the object without its `signature` member, base64url without padding. `key_id` must already be in
 * `unsigned`, so that it is covered by the signature.
 */
export function signDocument<T extends { key_id: string }>(unsigned: T, key: SigningKey): T & { signature: string } {
  const signature = sign(null, signingInput(unsigned), key.privateKeyObject).toString('base64url');
  return { ...unsigned, signature };
}

/** signDocument with the signature made on the thread pool (see signEd25519), for request paths. */
export async function signDocumentOffLoop<T extends { key_id: string }>(unsigned: T, key: SigningKey): Promise<T & { signature: string }> {
  const signature = (await signEd25519(signingInput(unsigned), key.privateKeyObject)).toString('base64url');
  return { ...unsigned, signature };
}

/** The bytes a document's signature covers: the UTF-8 of its RFC 8785 form without `signature`. */
function signingInput(unsigned: object): Buffer {
  return Buffer.from(canonicalize(unsigned), 'utf8');
}

/** Lowercase hex SHA-256 of the RFC 8785 form of a JSON value. */
export function canonicalSha256(value: unknown): string {
  return createHash('sha256').update(canonicalize(value), 'utf8').digest('hex');
}

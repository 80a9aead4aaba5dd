import { hash } from 'node:crypto';

// RFC 9162 §2.1.1 with SHA-256, the hash of RFC 6962. crypto.hash is one-shot
// (no Hash object), the fastest SHA-256 Node 20.12+ offers.

const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);
// Scratch for the common case of two 32-byte children. Safe to share: it is filled
// and hashed synchronously, and crypto.hash copies nothing back into it.
const pair = Buffer.alloc(65, 0x01);

/** MTH({}) = SHA-256() (RFC 9162 §2.1.1). */
export function emptyRoot(): Uint8Array {
  return hash('sha256', Buffer.alloc(0), 'buffer');
}

/** MTH({d(0)}) = SHA-256(0x00 || d(0)) (RFC 9162 §2.1.1). */
export function hashLeaf(data: Uint8Array): Uint8Array {
  return hash('sha256', Buffer.concat([LEAF, data]), 'buffer');
}

/** SHA-256(0x01 || left || right) (RFC 9162 §2.1.1). Inputs are normally 32-byte hashes. */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.byteLength === 32 && right.byteLength === 32) {
    pair.set(left, 1);
    pair.set(right, 33);
    return hash('sha256', pair, 'buffer');
  }
  return hash('sha256', Buffer.concat([NODE, left, right]), 'buffer');
}

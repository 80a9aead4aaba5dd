import { bytesEqual } from '../internal/encoding.js';
import type { MerkleVerification } from './errors.js';
import { hashChildren } from './hash.js';

export function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength === 32;
}

/**
 * Verifies that `leafHash` is leaf `leafIndex` of the tree of `treeSize` leaves whose
 * root is `root`, following RFC 9162 §2.1.3.2 step by step. Every hash must be 32
 * bytes; an index outside [0, treeSize) fails (so does every proof for an empty tree).
 * Sizes are JavaScript safe integers; halving is done by division, as bit operators
 * would truncate to 32 bits. Never throws.
 */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): MerkleVerification {
  if (!isHash(leafHash) || !isHash(root) || !Array.isArray(proof) || !proof.every(isHash)) {
    return { valid: false, reason: 'bad_hash_length' };
  }
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) {
    return { valid: false, reason: 'index_out_of_range' };
  }
  let fn = leafIndex,
    sn = treeSize - 1,
    r = leafHash;
  for (const p of proof) {
    if (sn === 0) return { valid: false, reason: 'wrong_proof_length' };
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      // Skip the levels where this node has no right sibling (the right edge).
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return { valid: false, reason: 'wrong_proof_length' };
  return bytesEqual(r, root) ? { valid: true, reason: null } : { valid: false, reason: 'root_mismatch' };
}

import { bytesEqual } from '../internal/encoding.js';
import type { MerkleVerification } from './errors.js';
import { hashChildren } from './hash.js';
import { isHash } from './verify-inclusion.js';

/**
 * Verifies that the tree of `size2` leaves with root `root2` extends the tree of
 * `size1` leaves with root `root1`, following RFC 9162 §2.1.4.2 step by step.
 *
 * Edge cases, as transparency-dev/merkle decides them (the RFC defines proofs only
 * for 0 < size1 < size2): size1 == size2 >= 1 holds with an empty proof and equal
 * roots; size1 == 0 always fails, since the empty tree is a prefix of every tree
 * and such a "proof" shows nothing; size1 > size2 fails; every hash must be 32
 * bytes, whatever the sizes. Never throws.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): MerkleVerification {
  if (!isHash(root1) || !isHash(root2) || !Array.isArray(proof) || !proof.every(isHash)) {
    return { valid: false, reason: 'bad_hash_length' };
  }
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2)) return { valid: false, reason: 'index_out_of_range' };
  if (size1 < 1 || size1 > size2) return { valid: false, reason: 'size_out_of_range' };
  if (size1 === size2) {
    if (proof.length !== 0) return { valid: false, reason: 'wrong_proof_length' };
    return bytesEqual(root1, root2) ? { valid: true, reason: null } : { valid: false, reason: 'root_mismatch' };
  }
  if (proof.length === 0) return { valid: false, reason: 'wrong_proof_length' };
  // Step 2: when size1 is a power of two the old root is a node of the new tree and
  // is not repeated in the proof.
  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1,
    sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!,
    sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return { valid: false, reason: 'wrong_proof_length' };
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return { valid: false, reason: 'wrong_proof_length' };
  return bytesEqual(fr, root1) && bytesEqual(sr, root2) ? { valid: true, reason: null } : { valid: false, reason: 'root_mismatch' };
}

function isPowerOfTwo(n: number): boolean {
  while (n % 2 === 0) n /= 2;
  return n === 1;
}

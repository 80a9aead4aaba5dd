import { MerkleTreeBuilder } from './builder.js';
import { MerkleError } from './errors.js';

/** Largest power of two strictly below n, for n >= 2 (the split k of RFC 9162 §2.1.1). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]) over leaf hashes (RFC 9162 §2.1.1), computed without recursion. */
export function rootFromLeafHashes(leafHashes: Iterable<Uint8Array>): Uint8Array {
  const builder = new MerkleTreeBuilder();
  for (const leafHash of leafHashes) builder.push(leafHash);
  return builder.root();
}

function mth(leaves: readonly Uint8Array[], start: number, end: number): Uint8Array {
  const builder = new MerkleTreeBuilder();
  for (let i = start; i < end; i++) builder.push(leaves[i]!);
  return builder.root();
}

/**
 * PATH(m, D[n]) of RFC 9162 §2.1.3.1: the audit path of leaf `index`, nearest sibling
 * first. Walks the recursion top-down and reverses, hashing each leaf once per level.
 * Throws a MerkleError if index is not in [0, n).
 */
export function inclusionProof(leafHashes: readonly Uint8Array[], index: number): Uint8Array[] {
  const n = leafHashes.length;
  if (!Number.isSafeInteger(index) || index < 0 || index >= n) {
    throw new MerkleError('index_out_of_range', `leaf index ${index} is not in [0, ${n})`);
  }
  const path: Uint8Array[] = [];
  let start = 0,
    end = n;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index - start < k) {
      path.push(mth(leafHashes, start + k, end));
      end = start + k;
    } else {
      path.push(mth(leafHashes, start, start + k));
      start += k;
    }
  }
  return path.reverse();
}

/**
 * PROOF(m, D[n]) = SUBPROOF(m, D[n], true) of RFC 9162 §2.1.4.1, for 0 < m <= n; m == n
 * gives the empty proof. Throws a MerkleError for other m.
 */
export function consistencyProof(leafHashes: readonly Uint8Array[], m: number): Uint8Array[] {
  const n = leafHashes.length;
  if (!Number.isSafeInteger(m) || m < 1 || m > n) {
    throw new MerkleError('size_out_of_range', `old size ${m} is not in [1, ${n}]`);
  }
  const proof: Uint8Array[] = [];
  let start = 0,
    end = n,
    b = true;
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push(mth(leafHashes, start + k, end));
      end = start + k;
    } else {
      proof.push(mth(leafHashes, start, start + k));
      m -= k;
      start += k;
      b = false;
    }
  }
  // SUBPROOF(m, D[m], false) = {MTH(D[m])}: the old tree's root is a node of the new one.
  if (!b) proof.push(mth(leafHashes, start, end));
  return proof.reverse();
}

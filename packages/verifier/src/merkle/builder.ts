import { emptyRoot, hashChildren } from './hash.js';
import { MerkleError } from './errors.js';

/**
 * Streaming Merkle Tree Hash (RFC 9162 §2.1.1) in O(log n) memory: keeps the roots of
 * the perfect subtrees that the binary digits of the size describe (a "compact
 * range"), largest first. Pushing merges equal-sized neighbours as a binary counter
 * carries; root() folds the stack from the right, which is exactly MTH's split at the
 * largest power of two below n, applied recursively to the right part.
 */
export class MerkleTreeBuilder {
  readonly #stack: Uint8Array[] = [];
  #size = 0;

  /** Number of leaves pushed. */
  get size(): number {
    return this.#size;
  }

  /** Appends the next leaf hash (32 bytes, e.g. from hashLeaf). */
  push(leafHash: Uint8Array): void {
    if (!(leafHash instanceof Uint8Array) || leafHash.byteLength !== 32) {
      throw new MerkleError('bad_hash_length', 'a leaf hash must be 32 bytes');
    }
    let node: Uint8Array = Uint8Array.prototype.slice.call(leafHash);
    // Each trailing 1 bit of the old size is a perfect subtree of the new node's height.
    for (let n = this.#size; n % 2 === 1; n = (n - 1) / 2) node = hashChildren(this.#stack.pop()!, node);
    this.#stack.push(node);
    this.#size++;
  }

  /** MTH of the leaves pushed so far; the builder can keep going afterwards. */
  root(): Uint8Array {
    let i = this.#stack.length - 1;
    if (i < 0) return emptyRoot();
    let node = this.#stack[i]!;
    while (--i >= 0) node = hashChildren(this.#stack[i]!, node);
    return node;
  }
}

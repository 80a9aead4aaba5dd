import { MerkleTreeBuilder, inclusionProof } from '@cauri/verifier';

/**
 * The day's tree is stored as chunks of `chunkSize` consecutive leaf hashes (a power of two), plus
 * the root of each chunk. RFC 9162 §2.1.1 splits a range of n > chunkSize leaves at the largest power
 * of two k < n, and such a k is a multiple of chunkSize; so every node above the chunks covers whole
 * chunks, and the tree over the leaves is the tree over the chunk roots (the last chunk may be
 * partial: its root is the MTH of its leaves, which is what the split leaves there). Hence:
 *
 * - root = MTH(chunk roots), with the same hashing as MTH(leaves);
 * - PATH(m, leaves) = PATH(m mod C, leaves of m's chunk) ++ PATH(floor(m / C), chunk roots),
 *   nearest sibling first (RFC 9162 §2.1.3.1), because the recursion of PATH descends through whole
 *   chunks until it reaches m's chunk, then inside it.
 *
 * A proof then reads one chunk and the chunk roots: O(C + n / C) hashes instead of O(n).
 */
export interface Chunk {
  index: number;
  /** The chunk's leaf hashes concatenated (32 bytes each). */
  leafHashes: Buffer;
}

export interface ChunkedTree {
  root: Uint8Array;
  count: number;
  /** The chunk roots concatenated (32 bytes each), chunk order. */
  chunkRoots: Buffer;
  /** The last, partial chunk (a full one was already returned by push); null when none. */
  last: Chunk | null;
}

export function assertChunkSize(chunkSize: number): void {
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || (chunkSize & (chunkSize - 1)) !== 0 || chunkSize > 1 << 20) {
    throw new RangeError(`chunk size must be a power of two between 1 and 2^20 (got ${chunkSize})`);
  }
}

/** Streams leaf hashes into chunks and the root, in O(chunkSize + n / chunkSize) memory. */
export class ChunkedTreeBuilder {
  readonly #chunkSize: number;
  #buffer: Buffer;
  #fill = 0;
  #count = 0;
  #chunkTree = new MerkleTreeBuilder();
  readonly #top = new MerkleTreeBuilder();
  readonly #roots: Buffer[] = [];

  constructor(chunkSize: number) {
    assertChunkSize(chunkSize);
    this.#chunkSize = chunkSize;
    this.#buffer = Buffer.allocUnsafe(chunkSize * 32);
  }

  get count(): number {
    return this.#count;
  }

  /** Appends a 32-byte leaf hash; returns the chunk this leaf completed, if any. */
  push(leafHash: Uint8Array): Chunk | null {
    this.#chunkTree.push(leafHash);
    this.#buffer.set(leafHash, this.#fill * 32);
    this.#count++;
    if (++this.#fill < this.#chunkSize) return null;
    return this.#close();
  }

  /** Ends the stream. The builder is not used afterwards. */
  finish(): ChunkedTree {
    const last = this.#fill > 0 ? this.#close() : null;
    return { root: this.#top.root(), count: this.count, chunkRoots: Buffer.concat(this.#roots), last };
  }

  #close(): Chunk {
    const root = Buffer.from(this.#chunkTree.root());
    this.#top.push(root);
    this.#roots.push(root);
    const chunk = { index: this.#roots.length - 1, leafHashes: Buffer.from(this.#buffer.subarray(0, this.#fill * 32)) };
    this.#chunkTree = new MerkleTreeBuilder();
    this.#fill = 0;
    return chunk;
  }
}

/** Splits concatenated 32-byte hashes. */
export function splitHashes(concatenated: Uint8Array): Uint8Array[] {
  if (concatenated.byteLength % 32 !== 0) throw new RangeError('concatenated hashes must be a multiple of 32 bytes');
  const out: Uint8Array[] = [];
  for (let i = 0; i < concatenated.byteLength; i += 32) out.push(concatenated.subarray(i, i + 32));
  return out;
}

/**
 * PATH of leaf `indexInChunk` of chunk `chunkIndex` in the whole tree (see the header): the path
 * inside the chunk, then the chunk's path among the chunk roots.
 */
export function chunkedInclusionProof(
  chunkLeafHashes: readonly Uint8Array[],
  indexInChunk: number,
  chunkRoots: readonly Uint8Array[],
  chunkIndex: number,
): Uint8Array[] {
  return [...inclusionProof(chunkLeafHashes, indexInChunk), ...inclusionProof(chunkRoots, chunkIndex)];
}

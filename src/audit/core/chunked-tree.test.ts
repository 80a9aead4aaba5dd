import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hashLeaf, inclusionProof, rootFromLeafHashes, verifyInclusion } from '@cauri/verifier';
import { ChunkedTreeBuilder, chunkedInclusionProof, splitHashes, type Chunk } from './chunked-tree.js';

const leaves = (n: number) => Array.from({ length: n }, (_, i) => hashLeaf(createHash('sha256').update(`leaf ${i}`).digest()));
const hex = (hashes: Uint8Array[]) => hashes.map((h) => Buffer.from(h).toString('hex'));

test('chunked roots and proofs equal the flat RFC 9162 tree for every size up to 70 and chunk sizes 1 to 16', () => {
  for (const chunkSize of [1, 2, 4, 8, 16]) {
    for (let n = 0; n <= 70; n++) {
      const hashes = leaves(n);
      const builder = new ChunkedTreeBuilder(chunkSize);
      const chunks: Chunk[] = [];
      for (const h of hashes) {
        const full = builder.push(h);
        if (full !== null) chunks.push(full);
      }
      const tree = builder.finish();
      if (tree.last !== null) chunks.push(tree.last);
      assert.equal(tree.count, n);
      assert.deepEqual(Buffer.from(tree.root), Buffer.from(rootFromLeafHashes(hashes)), `n=${n} C=${chunkSize}`);
      assert.deepEqual(
        chunks.map((c) => c.index),
        chunks.map((_, i) => i),
      );
      const roots = splitHashes(tree.chunkRoots);
      assert.equal(roots.length, Math.ceil(n / chunkSize));
      for (let m = 0; m < n; m++) {
        const c = Math.floor(m / chunkSize);
        const path = chunkedInclusionProof(splitHashes(chunks[c]!.leafHashes), m % chunkSize, roots, c);
        assert.deepEqual(hex(path), hex(inclusionProof(hashes, m)), `n=${n} C=${chunkSize} m=${m}`);
        assert.equal(verifyInclusion(m, n, hashes[m]!, path, tree.root).valid, true);
      }
    }
  }
});

test('chunk sizes must be powers of two', () => {
  for (const bad of [0, 3, 6, -4, 1.5, 2 ** 21]) assert.throws(() => new ChunkedTreeBuilder(bad), RangeError);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnchorError } from './anchor.js';
import { SandboxAnchor, sandboxBlockHeight } from './sandbox-anchor.js';

// The RFC 9162 root of the empty tree, SHA-256 of nothing: a real root of a day without orders.
const EMPTY_ROOT = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
// printf 'sandbox-anchor:2026-11-22:<EMPTY_ROOT>' | sha256sum
const EMPTY_ROOT_TX = '619a4b6ebb323c180fa1da9d96714b70dd20f179be42869890e98672f1772c1f';

test('the sandbox anchor hashes its fixed preimage and confirms at once', async () => {
  const anchor = new SandboxAnchor();
  assert.equal(anchor.chain, 'sandbox');
  const { tx_hash } = await anchor.submit({ date: '2026-11-22', merkleRoot: EMPTY_ROOT });
  assert.equal(tx_hash, EMPTY_ROOT_TX);
  assert.deepEqual(await anchor.confirm(tx_hash), { chain: 'sandbox', tx_hash: EMPTY_ROOT_TX, block_height: 20779 });
});

test('the sandbox anchor is deterministic across instances and idempotent per (date, root)', async () => {
  const a = new SandboxAnchor();
  const b = new SandboxAnchor();
  const input = { date: '2026-03-01', merkleRoot: 'ab'.repeat(32) };
  const first = await a.submit(input);
  assert.deepEqual(await a.submit(input), first);
  assert.deepEqual(await b.submit(input), first);
  assert.deepEqual(await a.confirm(first.tx_hash), await b.confirm(first.tx_hash));

  const otherRoot = await a.submit({ ...input, merkleRoot: 'cd'.repeat(32) });
  const otherDate = await a.submit({ ...input, date: '2026-03-02' });
  assert.notEqual(otherRoot.tx_hash, first.tx_hash);
  assert.notEqual(otherDate.tx_hash, first.tx_hash);
});

test('sandbox block heights are days since 1970-01-01, one more per day', () => {
  assert.equal(sandboxBlockHeight('1970-01-01'), 0);
  assert.equal(sandboxBlockHeight('2026-01-01'), 20454);
  assert.equal(sandboxBlockHeight('2026-12-31') - sandboxBlockHeight('2026-01-01'), 364);
  assert.equal(sandboxBlockHeight('2028-03-01') - sandboxBlockHeight('2028-02-28'), 2);
});

test('a hash the sandbox did not issue is dropped; submitting again heals it', async () => {
  const input = { date: '2026-11-22', merkleRoot: EMPTY_ROOT };
  const { tx_hash } = await new SandboxAnchor().submit(input);
  const restarted = new SandboxAnchor();
  await assert.rejects(
    restarted.confirm(tx_hash),
    (err: unknown) => err instanceof AnchorError && err.code === 'dropped' && err.txHash === tx_hash,
  );
  assert.equal((await restarted.submit(input)).tx_hash, tx_hash);
  assert.notEqual(await restarted.confirm(tx_hash), null);
});

test('malformed input is a TypeError before anything is recorded', async () => {
  const anchor = new SandboxAnchor();
  for (const input of [
    { date: '2026-02-30', merkleRoot: EMPTY_ROOT },
    { date: '2026-1-05', merkleRoot: EMPTY_ROOT },
    { date: '2026-11-22', merkleRoot: EMPTY_ROOT.toUpperCase() },
    { date: '2026-11-22', merkleRoot: `0x${EMPTY_ROOT}` },
    { date: '2026-11-22', merkleRoot: EMPTY_ROOT.slice(2) },
  ]) {
    await assert.rejects(anchor.submit(input), TypeError, JSON.stringify(input));
  }
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../lib/clock.js';
import { AnchorError, type AnchorErrorCode } from './anchor.js';
import { EvmAnchor, type EvmAnchorOptions } from './evm-anchor.js';
import { anchorCalldata, parseAnchorCalldata } from './evm-calldata.js';
import { startAnvil, type LocalAnvil } from './local-anvil.js';

// Anvil's well-known development keys (mnemonic "test test ... junk"), public test material: each
// account holds 10 000 ETH on a fresh anvil node and nowhere else.
const DEV_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const;

// PUSH1 0 PUSH1 0 REVERT: a contract that refuses every call.
const REVERTING_CODE = '0x60006000fd';

interface RpcTransaction {
  hash: string;
  from: string;
  to: string;
  input: string;
  value: string;
  nonce: string;
  type: string;
  blockNumber: string | null;
}

const root = () => randomBytes(32).toString('hex');
const isAnchorError = (code: AnchorErrorCode) => (err: unknown) => err instanceof AnchorError && err.code === code;

function anchorOn(node: LocalAnvil, options: Partial<EvmAnchorOptions> = {}): EvmAnchor {
  return new EvmAnchor({
    chain: `anvil-${node.chainId}`,
    rpcUrl: node.rpcUrl,
    privateKey: DEV_KEYS[0],
    confirmations: 1,
    chainId: node.chainId,
    ...options,
  });
}

/** Starts anvil for one test and stops it afterwards, whatever happens in between. */
async function anvilFor(t: TestContext, args?: readonly string[]): Promise<LocalAnvil> {
  // A missing or unrunnable binary throws here and fails the test, loudly, with anvil's output.
  const node = await startAnvil(args === undefined ? {} : { args });
  t.after(() => node.stop());
  return node;
}

/** Runs `fn` with automine off, so that transactions wait in the mempool until told otherwise. */
async function withoutAutomine(node: LocalAnvil, fn: () => Promise<void>): Promise<void> {
  await node.rpc('evm_setAutomine', [false]);
  try {
    await fn();
  } finally {
    await node.rpc('evm_setAutomine', [true]);
  }
}

test('EVM anchor against a local anvil node', { timeout: 120_000 }, async (t) => {
  const node = await anvilFor(t);
  const tx = (hash: string) => minedTransaction(node, hash);

  await t.test('submit, then confirm with one confirmation; the mined data is anchorCalldata(date, root)', async () => {
    const anchor = anchorOn(node);
    const input = { date: '2026-11-22', merkleRoot: root() };
    const { tx_hash } = await anchor.submit(input);
    assert.match(tx_hash, /^0x[0-9a-f]{64}$/);

    const mined = await tx(tx_hash);
    assert.equal(mined.input, anchorCalldata(input.date, input.merkleRoot));
    assert.deepEqual(parseAnchorCalldata(mined.input), input);
    assert.equal(mined.from, anchor.address.toLowerCase());
    assert.equal(mined.to, anchor.address.toLowerCase(), 'sent to itself by default');
    assert.equal(BigInt(mined.value), 0n);
    assert.equal(mined.type, '0x2', 'EIP-1559 fees on a London chain');

    const receipt = await anchor.confirm(tx_hash);
    assert.deepEqual(receipt, { chain: 'anvil-31337', tx_hash, block_height: Number(mined.blockNumber) });
    assert.equal(receipt?.block_height, Number(await node.rpc<string>('eth_blockNumber')));
  });

  await t.test('with two confirmations, confirm returns null until one more block is mined', async () => {
    const anchor = anchorOn(node, { confirmations: 2 });
    const { tx_hash } = await anchor.submit({ date: '2026-11-23', merkleRoot: root() });
    const includedIn = Number((await tx(tx_hash)).blockNumber);
    assert.equal(await anchor.confirm(tx_hash), null);
    assert.equal(await anchor.confirm(tx_hash), null, 'asking again mines nothing');
    await node.rpc('anvil_mine', ['0x1']);
    assert.deepEqual(await anchor.confirm(tx_hash), { chain: 'anvil-31337', tx_hash, block_height: includedIn });
  });

  await t.test('submissions in a row use consecutive nonces; the same (date, root) is not sent twice', async () => {
    const anchor = anchorOn(node);
    const before = Number(await node.rpc<string>('eth_getTransactionCount', [anchor.address, 'pending']));
    const first = await anchor.submit({ date: '2026-11-24', merkleRoot: root() });
    const secondInput = { date: '2026-11-25', merkleRoot: root() };
    const second = await anchor.submit(secondInput);
    assert.equal(Number((await tx(first.tx_hash)).nonce), before);
    assert.equal(Number((await tx(second.tx_hash)).nonce), before + 1);

    assert.deepEqual(await anchor.submit(secondInput), second);
    assert.equal(Number(await node.rpc<string>('eth_getTransactionCount', [anchor.address, 'pending'])), before + 2);
  });

  await t.test('concurrent submissions are serialised onto distinct consecutive nonces', async () => {
    const anchor = anchorOn(node, { privateKey: DEV_KEYS[1] });
    const before = Number(await node.rpc<string>('eth_getTransactionCount', [anchor.address, 'pending']));
    const sent = await Promise.all(['2026-12-01', '2026-12-02', '2026-12-03'].map((date) => anchor.submit({ date, merkleRoot: root() })));
    const nonces = await Promise.all(sent.map(async ({ tx_hash }) => Number((await tx(tx_hash)).nonce)));
    assert.deepEqual(nonces, [before, before + 1, before + 2]);
    for (const { tx_hash } of sent) assert.notEqual(await anchor.confirm(tx_hash), null);
  });

  await t.test('a transaction the node forgets is pending during the grace period, then dropped; its nonce is reused', async () => {
    const clock = new ManualClock();
    const anchor = anchorOn(node, { privateKey: DEV_KEYS[2], clock, dropGraceMs: 60_000 });
    const input = { date: '2026-12-04', merkleRoot: root() };
    let lost = '';
    await withoutAutomine(node, async () => {
      lost = (await anchor.submit(input)).tx_hash;
      assert.equal(await anchor.confirm(lost), null, 'pending in the mempool');
      await node.rpc('anvil_dropTransaction', [lost]);
      assert.equal(await anchor.confirm(lost), null, 'unknown, but sent 0 s ago');
      clock.advance(60_000);
      await assert.rejects(anchor.confirm(lost), (err: unknown) => isAnchorError('dropped')(err) && (err as AnchorError).txHash === lost);
    });

    const lostNonce = Number(await node.rpc<string>('eth_getTransactionCount', [anchor.address, 'latest']));
    // Published anew. With the same nonce and unchanged fees the signed bytes, and so the hash,
    // may well be the same as before (signatures are deterministic, RFC 6979): a rebroadcast.
    const again = await anchor.submit(input);
    const mined = await tx(again.tx_hash);
    assert.equal(Number(mined.nonce), lostNonce, 'the gap left by the dropped transaction is refilled');
    assert.notEqual(await anchor.confirm(again.tx_hash), null);
  });

  await t.test('a transaction that fails on chain is reverted', async () => {
    const target = `0x${randomBytes(20).toString('hex')}`;
    const anchor = anchorOn(node, { privateKey: DEV_KEYS[3], to: target });
    await withoutAutomine(node, async () => {
      const { tx_hash } = await anchor.submit({ date: '2026-12-05', merkleRoot: root() });
      // The recipient gains code between estimation and inclusion, and refuses the call.
      await node.rpc('anvil_setCode', [target, REVERTING_CODE]);
      await node.rpc('evm_mine');
      await assert.rejects(anchor.confirm(tx_hash), isAnchorError('reverted'));
    });
    // Found already while estimating gas, once the recipient is known to refuse.
    await assert.rejects(anchor.submit({ date: '2026-12-06', merkleRoot: root() }), isAnchorError('reverted'));
  });

  await t.test('an account without funds is misconfigured, and says which account to fund', async () => {
    const anchor = anchorOn(node, { privateKey: `0x${randomBytes(32).toString('hex')}` });
    await assert.rejects(anchor.submit({ date: '2026-12-07', merkleRoot: root() }), (err: unknown) => {
      return isAnchorError('misconfigured')(err) && (err as Error).message.includes(anchor.address);
    });
  });

  await t.test('a node serving another chain id is misconfigured', async () => {
    const anchor = anchorOn(node, { chainId: 1 });
    await assert.rejects(anchor.submit({ date: '2026-12-08', merkleRoot: root() }), (err: unknown) => {
      return isAnchorError('misconfigured')(err) && /chain id 31337, not 1\b/.test((err as Error).message);
    });
  });
});

test('EVM anchor falls back to legacy eth_gasPrice fees on a chain without EIP-1559', { timeout: 60_000 }, async (t) => {
  const node = await anvilFor(t, ['--hardfork', 'berlin']);
  const anchor = anchorOn(node);
  const input = { date: '2026-11-22', merkleRoot: root() };
  const { tx_hash } = await anchor.submit(input);
  const mined = await minedTransaction(node, tx_hash);
  assert.equal(mined.type, '0x0');
  assert.equal(mined.input, anchorCalldata(input.date, input.merkleRoot));
  assert.deepEqual(await anchor.confirm(tx_hash), { chain: 'anvil-31337', tx_hash, block_height: Number(mined.blockNumber) });
});

test('an unreachable RPC endpoint is unavailable, and the message hides the URL path', async () => {
  const port = await closedPort();
  const anchor = new EvmAnchor({
    chain: 'ethereum-sepolia',
    rpcUrl: `http://127.0.0.1:${port}/v3/secret-api-key`,
    privateKey: DEV_KEYS[0],
    confirmations: 3,
    timeoutMs: 2_000,
  });
  const unavailable = (err: unknown) =>
    isAnchorError('unavailable')(err) && !(err as Error).message.includes('secret-api-key') && (err as Error).cause === undefined;
  await assert.rejects(anchor.submit({ date: '2026-11-22', merkleRoot: root() }), unavailable);
  await assert.rejects(anchor.confirm(`0x${'ab'.repeat(32)}`), unavailable);
});

test('a malformed key or option is misconfigured at construction, and the key never appears in the message', () => {
  const base: EvmAnchorOptions = { chain: 'anvil-31337', rpcUrl: 'http://127.0.0.1:8545', privateKey: DEV_KEYS[0], confirmations: 1 };
  const secp256k1Order = '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';
  for (const privateKey of ['not-a-key', DEV_KEYS[0].slice(0, -2), `0x${'00'.repeat(32)}`, secp256k1Order, `${DEV_KEYS[0]}00`]) {
    assert.throws(
      () => new EvmAnchor({ ...base, privateKey }),
      (err: unknown) => isAnchorError('misconfigured')(err) && !(err as Error).message.includes(privateKey.slice(2, 18)),
      privateKey,
    );
  }
  for (const bad of [
    { rpcUrl: 'ftp://127.0.0.1:8545' },
    { rpcUrl: 'localhost:8545' },
    { chain: 'Ethereum Sepolia' },
    { confirmations: 0 },
    { confirmations: 1.5 },
    { chainId: 0 },
    { to: '0x1234' },
  ]) {
    assert.throws(() => new EvmAnchor({ ...base, ...bad }), isAnchorError('misconfigured'), JSON.stringify(bad));
  }
  // Without the 0x prefix, the same key is accepted.
  assert.equal(new EvmAnchor({ ...base, privateKey: DEV_KEYS[0].slice(2) }).address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
});

test('confirm rejects a malformed transaction hash with TypeError, before any request', async () => {
  const anchor = new EvmAnchor({ chain: 'anvil-31337', rpcUrl: 'http://127.0.0.1:9', privateKey: DEV_KEYS[0], confirmations: 1 });
  await assert.rejects(anchor.confirm('ab'.repeat(32)), TypeError);
  await assert.rejects(anchor.confirm('0x1234'), TypeError);
});

/**
 * The transaction once it is in a block. Anvil answers eth_sendRawTransaction before its automine
 * has sealed the block, so a test reading right after submit must wait a moment.
 */
async function minedTransaction(node: LocalAnvil, hash: string): Promise<RpcTransaction> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = await node.rpc<RpcTransaction | null>('eth_getTransactionByHash', [hash]);
    if (found !== null && found.blockNumber !== null) return found;
    if (Date.now() > deadline) throw new Error(`transaction ${hash} not mined within 10 s: ${JSON.stringify(found)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A loopback port nobody listens on: the kernel hands out a free one, which is then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

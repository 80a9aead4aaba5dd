import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verifySnapshot, verifySnapshotProof } from '@cauri/verifier';
import { startAnvil } from '../../src/audit/anchors/local-anvil.js';
import { anchorCalldata } from '../../src/audit/anchors/evm-calldata.js';
import { DATABASES, KYC3, auditSetup, json, postOrders } from './audit-support.js';

// Anvil's first development account (public, funded on every anvil node).
const ANVIL_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

for (const database of DATABASES) {
  describe(`audit snapshots anchored on a local EVM node (anvil) on ${database.name}`, () => {
    test('the root is anchored in a transaction whose input is anchorCalldata(date, root); served once confirmed', async (t) => {
      const anvil = await startAnvil();
      t.after(() => anvil.stop());
      const c = await auditSetup(t, database, {
        CAURI_ANCHOR: 'evm',
        CAURI_EVM_RPC_URL: anvil.rpcUrl,
        CAURI_EVM_PRIVATE_KEY: ANVIL_KEY,
        CAURI_EVM_CHAIN_NAME: 'anvil-local',
        CAURI_EVM_CHAIN_ID: String(anvil.chainId),
        CAURI_EVM_CONFIRMATIONS: '2',
      });
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const [orderId] = await postOrders(c, c.api, attestationId, 3);
      c.clock.set('2026-11-24T00:05:00.000Z');
      await c.login();

      // Sent and mined, but one confirmation of the two: not served yet.
      const first = await c.worker.runOnce();
      assert.deepEqual(first.anchoring, [{ date: '2026-11-23', state: 'submitted' }]);
      assert.equal((await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-23'))).status, 404);
      // Not due again before the poll interval.
      assert.deepEqual((await c.worker.runOnce()).anchoring, []);

      await anvil.rpc('anvil_mine', ['0x1']);
      c.clock.advance(15_000);
      const second = await c.worker.runOnce();
      assert.deepEqual(second.anchoring, [{ date: '2026-11-23', state: 'anchored' }]);

      const { status, body: snapshot } = await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-23'));
      assert.equal(status, 200);
      assert.equal(snapshot.anchored_at, '2026-11-24T00:05:15Z');
      const [anchor] = snapshot.anchors;
      assert.equal(anchor.chain, 'anvil-local');
      const tx = await anvil.rpc<{ input: string; blockNumber: string; from: string }>('eth_getTransactionByHash', [anchor.tx_hash]);
      assert.equal(tx.input, anchorCalldata('2026-11-23', snapshot.merkle_root));
      assert.equal(Number(tx.blockNumber), anchor.block_height);
      const keys = (await json(fetch(`${c.base}/.well-known/cauri`))).body;
      assert.equal(verifySnapshot(snapshot, keys).valid, true);
      const proof = (await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${orderId}`))).body;
      assert.equal(verifySnapshotProof(proof, snapshot).valid, true);
      // Exactly one anchoring transaction was sent.
      assert.equal(Number(await anvil.rpc<string>('eth_getTransactionCount', [tx.from, 'latest'])), 1);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyRoot, rootFromLeafHashes, verifySnapshot, verifySnapshotChain, verifySnapshotProof } from '@cauri/verifier';
import { newId } from '../../src/lib/ids.js';
import { isoMillis } from '../../src/lib/clock.js';
import { apiClient } from '../support/api.js';
import { KOLA_RESTING } from '../support/order-context.js';
import { orderRow } from '../support/orders.js';
import {
  BAOBAB,
  DATABASES,
  KYC3,
  auditSetup,
  clientLeaf,
  json,
  leafHashOf,
  postOrders,
  smallChunkService,
  startRuntimeIn,
  type AuditCtx,
  type Json,
} from './audit-support.js';
import { SnapshotWorker } from '../../src/workers/snapshot-worker.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const flip = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);

/** Checks a served day against the orders the client placed: root, count, every proof, tampering. */
async function checkDay(c: AuditCtx, date: string, ids: string[], attestation: Json, keys: Json): Promise<Json> {
  const { status, body: snapshot } = await json(c.api.call('GET', `/v1/audit/snapshots/${date}`));
  assert.equal(status, 200, JSON.stringify(snapshot));
  assert.deepEqual(Object.keys(snapshot).sort(), [
    'anchored_at',
    'anchors',
    'count',
    'date',
    'key_id',
    'merkle_root',
    'previous_merkle_root',
    'signature',
  ]);
  assert.deepEqual(verifySnapshot(snapshot, keys), { valid: true, reason: null, snapshot });
  assert.equal(snapshot.count, ids.length);
  const orders = await Promise.all(ids.map(async (id) => (await json(c.api.call('GET', `/v1/orders/${id}`))).body));
  const leaves = orders.map((o) => clientLeaf(o, attestation)).sort((a, b) => (a.id < b.id ? -1 : 1));
  assert.equal(snapshot.merkle_root, hex(rootFromLeafHashes(leaves.map(leafHashOf))));
  if (ids.length === 0) assert.equal(snapshot.merkle_root, hex(emptyRoot()));
  assert.equal(snapshot.anchors.length, 1);
  assert.equal(snapshot.anchors[0].chain, 'sandbox');
  for (const [index, leaf] of leaves.entries()) {
    const { status: s, body: proof } = await json(c.api.call('GET', `/v1/audit/snapshots/${date}/proofs/${leaf.id}`));
    assert.equal(s, 200, JSON.stringify(proof));
    assert.equal(proof.leaf_index, index);
    assert.equal(proof.tree_size, ids.length);
    assert.deepEqual(JSON.parse(proof.leaf), leaf);
    assert.equal(verifySnapshotProof(proof, snapshot, { attestation }).valid, true);
    // Tampering with any part of the proof, the leaf or the root is caught.
    const bad = (p: Json, s: Json = snapshot) => verifySnapshotProof(p, s).reason;
    if (proof.audit_path.length > 0) {
      assert.equal(bad({ ...proof, audit_path: [flip(proof.audit_path[0]), ...proof.audit_path.slice(1)] }), 'bad_proof');
      assert.equal(bad({ ...proof, audit_path: proof.audit_path.slice(1) }), 'bad_proof');
      assert.equal(bad({ ...proof, leaf_index: (index + 1) % ids.length }), 'bad_proof');
    }
    assert.equal(bad({ ...proof, leaf: proof.leaf.replace(`"qty":${leaf.qty}`, `"qty":${leaf.qty + 1}`) }), 'leaf_mismatch');
    assert.equal(bad({ ...proof, leaf_hash: flip(proof.leaf_hash) }), 'leaf_mismatch');
    assert.equal(bad({ ...proof, merkle_root: flip(proof.merkle_root) }), 'snapshot_mismatch');
    assert.equal(
      bad({ ...proof, merkle_root: flip(proof.merkle_root) }, { ...snapshot, merkle_root: flip(snapshot.merkle_root) }),
      'bad_proof',
    );
    assert.equal(verifySnapshotProof(proof, snapshot, { attestation: { ...attestation, level: 'KYC1' } }).reason, 'attestation_mismatch');
  }
  // A tampered snapshot no longer verifies.
  assert.equal(verifySnapshot({ ...snapshot, count: snapshot.count + 1 }, keys).reason, 'bad_signature');
  assert.equal(verifySnapshot({ ...snapshot, merkle_root: flip(snapshot.merkle_root) }, keys).valid, false);
  return snapshot;
}

for (const database of DATABASES) {
  describe(`audit snapshots on ${database.name}`, () => {
    test('days of 3, 0, 1, 2 and 7 orders: roots, every proof, tampering, the chain, the schedule and one event per day', async (t) => {
      const c = await auditSetup(t, database);
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const attestation = (await json(c.api.call('GET', `/v1/kyc/attestations/${attestationId}`))).body;
      const plan: [string, number][] = [
        ['2026-11-23', 3],
        ['2026-11-24', 0],
        ['2026-11-25', 1],
        ['2026-11-26', 2],
        ['2026-11-27', 7],
      ];
      const ids = new Map<string, string[]>();
      for (const [date, n] of plan) {
        c.clock.set(`${date}T09:00:00.000Z`);
        await c.login();
        ids.set(date, await postOrders(c, c.api, attestationId, n));
      }
      // An order at the last millisecond of the 27th belongs to the 27th.
      c.clock.set('2026-11-27T23:59:59.999Z');
      await c.login();
      ids.get('2026-11-27')!.push(...(await postOrders(c, c.api, attestationId, 1)));

      // 00:01: the 27th is not settled yet (2 minutes); every earlier day is built and anchored.
      c.clock.set('2026-11-28T00:01:00.000Z');
      await c.login();
      assert.equal((await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-26'))).status, 404);
      const first = await c.worker.runOnce();
      assert.deepEqual(
        first.built.map((b) => [b.date, b.outcome]),
        plan.slice(0, 4).map(([d]) => [d, 'built']),
      );
      assert.deepEqual(
        first.anchoring.map((a) => a.state),
        ['anchored', 'anchored', 'anchored', 'anchored'],
      );
      assert.equal((await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-27'))).status, 404);
      c.clock.set('2026-11-28T00:03:00.000Z');
      const second = await c.worker.runOnce();
      assert.deepEqual(
        second.built.map((b) => [b.date, b.outcome, b.outcome === 'built' ? b.count : null]),
        [['2026-11-27', 'built', 8]],
      );

      const keys = (await json(fetch(`${c.base}/.well-known/cauri`))).body;
      const snapshots: Json[] = [];
      for (const [date] of plan) snapshots.push(await checkDay(c, date, ids.get(date)!, attestation, keys));
      assert.equal(snapshots[0]!.previous_merkle_root, null, 'the first snapshot starts the chain');
      for (let i = 1; i < snapshots.length; i++)
        assert.deepEqual(verifySnapshotChain(snapshots[i - 1], snapshots[i]), { valid: true, reason: null });
      assert.equal(verifySnapshotChain(snapshots[0], snapshots[2]).reason, 'not_consecutive');
      assert.equal(
        verifySnapshotChain(snapshots[1], { ...snapshots[2], previous_merkle_root: snapshots[0]!.merkle_root }).reason,
        'root_mismatch',
      );

      // Running again, and rebuilding on demand, changes nothing: one snapshot and one event per day.
      await c.worker.runOnce();
      assert.deepEqual(await c.runtime.services.audit.build('2026-11-25'), [{ date: '2026-11-25', outcome: 'exists', state: 'anchored' }]);
      assert.deepEqual(await c.runtime.services.audit.recompute('2026-11-27'), { merkle_root: snapshots[4]!.merkle_root, count: 8 });
      const events = await c.runtime.storage.db
        .selectFrom('events')
        .select(['data', 'client_id'])
        .where('type', '=', 'audit.snapshot')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        events.map((e) => JSON.parse(e.data)),
        snapshots,
      );
      assert.ok(events.every((e) => e.client_id === null));
      assert.equal((await c.runtime.storage.db.selectFrom('audit_snapshots').select('date').execute()).length, 5);
    });

    test('an order amended after its day was built still has its proof: the leaf as the tree holds it', async (t) => {
      const c = await auditSetup(t, database);
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const attestation = (await json(c.api.call('GET', `/v1/kyc/attestations/${attestationId}`))).body;
      const placed = await json(
        c.api.post('/v1/orders', {
          rcpt_to: BAOBAB,
          kyc_attestation_id: attestationId,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 3,
          limit_price_cents: KOLA_RESTING,
          time_in_force: 'gtc',
        }),
      );
      assert.equal(placed.body.status, 'routed', JSON.stringify(placed.body));
      const before = clientLeaf(placed.body, attestation);
      c.clock.set('2026-11-24T00:05:00.000Z');
      await c.worker.runOnce();
      await c.login();
      const amended = await json(c.api.post(`/v1/orders/${placed.body.id}/amend`, { qty: 5 }));
      assert.equal(amended.status, 200, JSON.stringify(amended.body));
      assert.equal(amended.body.qty, 5);
      const snapshot = (await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-23'))).body;
      const res = await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${placed.body.id}`));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(JSON.parse(res.body.leaf), before, 'the quantity the order had when the day was built');
      assert.equal(verifySnapshotProof(res.body, snapshot, { attestation }).valid, true);
    });

    test('bad input: malformed, impossible and future dates, unknown and foreign orders, another day, missing scope', async (t) => {
      const c = await auditSetup(t, database);
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const [mine] = await postOrders(c, c.api, attestationId, 1);
      const other = await apiClient(c.runtime, c.base, undefined, 'other client');
      const otherAtt = (await json(other.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const [theirs] = await postOrders(c, other, otherAtt, 1);
      c.clock.set('2026-11-24T09:00:00.000Z');
      await c.login();
      await c.login(other);
      const [nextDay] = await postOrders(c, c.api, attestationId, 1);
      c.clock.set('2026-11-25T00:05:00.000Z');
      await c.worker.runOnce();
      await c.login();
      await c.login(other);

      for (const date of ['2026-02-30', '2026-13-01', '26-11-23', '2026-11-23x', 'yesterday', '2026-1-05']) {
        for (const path of [`/v1/audit/snapshots/${date}`, `/v1/audit/snapshots/${date}/proofs/${mine}`]) {
          const res = await json(c.api.call('GET', path));
          assert.equal(res.status, 422, path);
          assert.equal(res.body.code, 'validation_error');
          const details = (res.body.details as Json[]).map(({ field, rule, value }) => ({ field, rule, value }));
          assert.deepEqual(details, [{ field: 'date', rule: 'format', value: date }]);
        }
      }
      // A future day, today, and a day before any order: no snapshot (404, the spec's only status here).
      for (const date of ['2031-01-01', '2026-11-25', '2026-11-01']) {
        assert.equal((await json(c.api.call('GET', `/v1/audit/snapshots/${date}`))).status, 404, date);
        assert.equal((await json(c.api.call('GET', `/v1/audit/snapshots/${date}/proofs/${mine}`))).status, 404, date);
      }
      assert.equal((await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${mine}`))).status, 200);
      assert.equal((await json(other.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${theirs}`))).status, 200);
      for (const id of [theirs, newId('order'), 'ord_nope', 'att_00000000000000000000000000']) {
        const res = await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${id}`));
        assert.equal(res.status, 404, id);
        assert.equal(res.body.code, 'not_found');
      }
      const otherDay = await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-23/proofs/${nextDay}`));
      assert.equal(otherDay.status, 404);
      assert.match(otherDay.body.message, /created on 2026-11-24/);
      assert.equal((await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-24/proofs/${nextDay}`))).status, 200);

      const reader = await apiClient(c.runtime, c.base, ['orders:read'], 'no audit scope');
      const forbidden = await json(reader.call('GET', '/v1/audit/snapshots/2026-11-23'));
      assert.equal(forbidden.status, 403);
      assert.equal((await fetch(`${c.base}/v1/audit/snapshots/2026-11-23`)).status, 401);
      // The command line refuses days that are not over, and days before the chain starts.
      await assert.rejects(c.runtime.services.audit.build('2026-11-25'), /not over yet/);
      await assert.rejects(c.runtime.services.audit.build('2026-11-20'), /before the first day/);
    });

    test('1,000 and 333 orders in a day, streamed in pages and small chunks: roots and a proof for every leaf', async (t) => {
      const c = await auditSetup(t, database);
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      const attestation = (await json(c.api.call('GET', `/v1/kyc/attestations/${attestationId}`))).body;
      const att = await c.runtime.storage.db
        .selectFrom('attestations')
        .selectAll()
        .where('id', '=', attestationId)
        .executeTakeFirstOrThrow();
      // The volume is inserted straight into the orders table (one transaction), as the order
      // service stores it: a thousand POSTs would test the order path, not the snapshot.
      const rows = (date: string, n: number) =>
        Array.from({ length: n }, (_, i) => {
          const created = Date.parse(`${date}T00:00:00.000Z`) + Math.floor((i * 86_399_999) / Math.max(1, n - 1));
          return orderRow({
            id: newId('order', created),
            client_id: c.api.clientId,
            created_at: created,
            rcpt_to: BAOBAB,
            kyc_attestation_id: attestationId,
            kyc_attestation_sha256: att.document_sha256,
            subject_id: KYC3.subject_id,
            side: (i % 2 ? 'buy' : 'sell') as 'buy' | 'sell',
            qty: 1 + (i % 97),
            limit_price_cents: i % 5 ? 1_500_000 + i : null,
            reference_price_cents: 1_550_000,
            route_attempts: 1,
          });
        });
      const days: [string, number][] = [
        ['2026-11-24', 1000],
        ['2026-11-25', 333],
      ];
      const inserted = new Map(days.map(([d, n]) => [d, rows(d, n)]));
      await c.runtime.storage.transact(async (trx) => {
        for (const list of inserted.values())
          for (let i = 0; i < list.length; i += 200)
            await trx
              .insertInto('orders')
              .values(list.slice(i, i + 200))
              .execute();
      });
      c.clock.set('2026-11-26T01:00:00.000Z');
      await c.login();
      // Chunks of 16 leaves and pages of 37 orders: many chunks, pages and lease renewals.
      const audit = smallChunkService(c);
      const built = await audit.catchUp();
      // The chain starts on the first order's day: the 23rd (the attestation's day) has no order.
      assert.deepEqual(
        built.map((b) => [b.date, b.outcome]),
        [
          ['2026-11-24', 'built'],
          ['2026-11-25', 'built'],
        ],
      );
      await audit.advanceAnchoring();
      const keys = (await json(fetch(`${c.base}/.well-known/cauri`))).body;
      for (const [date, n] of days) {
        const snapshot = await audit.snapshot(c.runtime.storage.db, date);
        assert.equal(verifySnapshot(snapshot, keys).valid, true);
        const leaves = inserted
          .get(date)!
          .map((r) => clientLeaf({ ...r, created_at: isoMillis(r.created_at) }, attestation))
          .sort((a, b) => (a.id < b.id ? -1 : 1));
        assert.equal(snapshot.count, n);
        assert.equal(snapshot.merkle_root, hex(rootFromLeafHashes(leaves.map(leafHashOf))));
        const started = performance.now();
        for (const [index, leaf] of leaves.entries()) {
          const proof = await audit.proof(c.runtime.storage.db, c.api.clientId as never, date, leaf.id);
          assert.equal(proof.leaf_index, index);
          const verdict = verifySnapshotProof(proof, snapshot, { attestation });
          assert.equal(verdict.valid, true, `${date} #${index}: ${JSON.stringify(verdict)}`);
        }
        t.diagnostic(`${date}: ${n} proofs in ${(performance.now() - started).toFixed(0)} ms`);
      }
      // Over HTTP, the default service (1024-leaf chunks) proves the same leaves identically.
      const served = (await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-24'))).body;
      assert.equal(served.merkle_root, (await audit.snapshot(c.runtime.storage.db, '2026-11-24')).merkle_root);
      const some = inserted.get('2026-11-24')![500]!.id;
      assert.deepEqual(
        (await json(c.api.call('GET', `/v1/audit/snapshots/2026-11-24/proofs/${some}`))).body,
        await audit.proof(c.runtime.storage.db, c.api.clientId as never, '2026-11-24', some),
      );
    });

    test('two processes racing for the same days build exactly one snapshot each', async (t) => {
      const c = await auditSetup(t, database);
      const second = await startRuntimeIn(t, c.env);
      const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
      await postOrders(c, c.api, attestationId, 5);
      c.clock.set('2026-11-24T09:00:00.000Z');
      await c.login();
      await postOrders(c, c.api, attestationId, 4);
      c.clock.set('2026-11-25T00:02:30.000Z');
      const other = new SnapshotWorker(second.services.audit, c.clock, second.app.log);
      const results = await Promise.all([c.worker.runOnce(), other.runOnce(), c.worker.runOnce(), other.runOnce()]);
      // Whoever lost a race retries on its next pass; afterwards both days are served.
      await Promise.all([c.worker.runOnce(), other.runOnce()]);
      const rows = await c.runtime.storage.db.selectFrom('audit_snapshots').select(['date', 'state', 'count']).orderBy('date').execute();
      assert.deepEqual(rows, [
        { date: '2026-11-23', state: 'anchored', count: 5 },
        { date: '2026-11-24', state: 'anchored', count: 4 },
      ]);
      const builds = results.flatMap((r) => r.built).filter((b) => b.outcome === 'built');
      assert.ok(builds.length <= 2, JSON.stringify(results));
      const events = await c.runtime.storage.db.selectFrom('events').select('data').where('type', '=', 'audit.snapshot').execute();
      assert.equal(events.length, 2);
      await c.login();
      const a = (await json(c.api.call('GET', '/v1/audit/snapshots/2026-11-24'))).body;
      assert.deepEqual(a, await second.services.audit.snapshot(second.storage.db, '2026-11-24'));
    });
  });
}

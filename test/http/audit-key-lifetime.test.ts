import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifySnapshot } from '@cauri/verifier';
import { DATABASES, KYC3, auditSetup, json, postOrders } from './audit-support.js';

for (const database of DATABASES) {
  test(`on ${database.name}, the first snapshot sealed after the key's planned end, with no rotation made, still verifies`, async (t) => {
    // The key opens at start: its planned end is 2027-11-23T09:00:00Z. Nothing else signs with it
    // after that (no attestation, no revocation list read), and no worker rotated it.
    const c = await auditSetup(t, database, { CAURI_ATTESTATION_VALIDITY_DAYS: '730' }, '2026-11-23T09:00:00.000Z');
    const attestationId = (await json(c.api.post('/v1/kyc/attestations', KYC3))).body.id as string;
    c.clock.set('2027-11-23T10:00:00.000Z');
    await c.login();
    await postOrders(c, c.api, attestationId, 1);
    c.clock.set('2027-11-24T00:05:00.000Z');
    await c.login();
    const run = await c.worker.runOnce();
    assert.deepEqual(
      run.anchoring.map((a) => a.state),
      ['anchored'],
    );
    const { status, body: snapshot } = await json(c.api.call('GET', '/v1/audit/snapshots/2027-11-23'));
    assert.equal(status, 200, JSON.stringify(snapshot));
    const keys = (await json(fetch(`${c.base}/.well-known/cauri`))).body;
    assert.deepEqual(verifySnapshot(snapshot, keys), { valid: true, reason: null, snapshot }, JSON.stringify(keys.keys));
  });
}

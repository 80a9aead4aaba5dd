import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { ManualClock } from '../lib/clock.js';
import { KeyRing } from './key-ring.js';

for (const database of DATABASES) {
  test(`key ring on ${database.name}: sealed at rest, consecutive windows, a wrong master key named`, async (t) => {
    const storage = await openTestStorage(t, database);
    const clock = new ManualClock('2026-11-22T10:00:00.400Z');
    const sealing = randomBytes(32);
    const ring = new KeyRing(storage.db, storage.dialect, sealing, clock);
    const first = await ring.current('attestation');
    assert.equal(first.validFrom, Date.parse('2026-11-22T10:00:00Z'), 'windows start on whole seconds');
    const stored = await storage.db.selectFrom('signing_keys').selectAll().execute();
    const der = first.privateKeyObject.export({ format: 'der', type: 'pkcs8' });
    for (const row of stored)
      assert.ok(!row.private_key_sealed.includes(der.toString('base64url')), 'private half is not stored in the clear');

    // Rotation within the same second still leaves the first key a non-empty window.
    const { previous, current } = await ring.rotate('attestation');
    assert.ok(previous !== null && previous.validUntil !== null);
    assert.ok(previous.validUntil > previous.validFrom);
    assert.equal(previous.validUntil, current.validFrom);

    const stranger = new KeyRing(storage.db, storage.dialect, randomBytes(32), clock);
    await assert.rejects(stranger.current('attestation'), /CAURI_MASTER_KEY: does not open signing key/);
  });

  test(`key ring on ${database.name}: processes that find the same key due rotate it once`, async (t) => {
    const storage = await openTestStorage(t, database);
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    const sealing = randomBytes(32);
    const rings = [0, 1, 2].map(() => new KeyRing(storage.db, storage.dialect, sealing, clock));
    const first = await rings[0]!.current('token');
    clock.set(KeyRing.windowEnd(first) - 12 * 60 * 60 * 1000);
    const rotated = await Promise.all(rings.map((ring) => ring.rotateIfDue('token')));
    assert.equal(rotated.filter(Boolean).length, 1, 'one process rotated');
    const keys = await rings[0]!.all('token');
    assert.equal(keys.length, 2, keys.map((k) => `${k.validFrom}..${k.validUntil}`).join(' '));
  });
}

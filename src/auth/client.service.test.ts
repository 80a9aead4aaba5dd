import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DATABASES, openSharedStorages, openTestStorage } from '../../test/support/harness.js';
import { ManualClock } from '../lib/clock.js';
import { clientAcceptsToken, ClientService, SECRET_OVERLAP_MS } from './client.service.js';

test('a token is accepted while its client is active and was not disabled after the token was issued', () => {
  const at = Date.parse('2026-11-22T10:00:00.400Z');
  const second = Math.floor(at / 1000);
  assert.equal(clientAcceptsToken({ status: 'active', disabled_at: null }, second), true);
  assert.equal(clientAcceptsToken({ status: 'disabled', disabled_at: at }, second + 60), false, 'a disabled client accepts nothing');
  assert.equal(clientAcceptsToken(undefined, second), false, 'an unknown client accepts nothing');
  assert.equal(clientAcceptsToken({ status: 'active', disabled_at: at }, second - 1), false, 'issued before the disabling');
  assert.equal(
    clientAcceptsToken({ status: 'active', disabled_at: at }, second),
    false,
    'issued in the second of the disabling: counted before it',
  );
  assert.equal(clientAcceptsToken({ status: 'active', disabled_at: at }, second + 1), true, 'issued after');
});

for (const database of DATABASES) {
  describe(`client credentials on ${database.name}`, () => {
    test('a created client authenticates with its secret; only a keyed hash is stored', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const marker = () => storage.changeMarker();
      const clients = new ClientService(db, randomBytes(32), 'sandbox', new ManualClock(), marker);
      const issued = await clients.create('acme', ['orders:read', 'orders:write']);
      assert.match(issued.client_secret, /^sk_test_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual((await clients.authenticate(issued.client_id, issued.client_secret))?.scopes, ['orders:read', 'orders:write']);
      assert.equal(await clients.authenticate(issued.client_id, `${issued.client_secret}x`), null);
      const other = await clients.create('other');
      assert.equal(await clients.authenticate(other.client_id, issued.client_secret), null, "another client's secret");
      const stored = await db.selectFrom('client_secrets').selectAll().execute();
      for (const row of stored) assert.ok(!row.hash.includes(issued.client_secret) && row.hash !== issued.client_secret);
      assert.ok(!JSON.stringify(stored).includes(issued.client_secret.slice(8)));
    });

    test('a secret of the other mode never authenticates', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const marker = () => storage.changeMarker();
      const key = randomBytes(32);
      const sandbox = new ClientService(db, key, 'sandbox', new ManualClock(), marker);
      const production = new ClientService(db, key, 'production', new ManualClock(), marker);
      const live = await production.create('live');
      assert.match(live.client_secret, /^sk_live_/);
      assert.equal(await sandbox.authenticate(live.client_id, live.client_secret), null);
      const testSecret = await sandbox.create('test');
      assert.equal(await production.authenticate(testSecret.client_id, testSecret.client_secret), null);
    });

    test('after rotation the old secret works for 24 hours, then fails', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const marker = () => storage.changeMarker();
      const clock = new ManualClock();
      const clients = new ClientService(db, randomBytes(32), 'sandbox', clock, marker);
      const first = await clients.create('acme');
      const second = await clients.rotateSecret(first.client_id);
      assert.ok(second !== null);
      assert.equal(second.previous_secret_expires_at, new Date(clock.now().getTime() + SECRET_OVERLAP_MS).toISOString());
      clock.advance(SECRET_OVERLAP_MS - 1);
      assert.notEqual(await clients.authenticate(first.client_id, first.client_secret), null, 'old secret inside the overlap');
      assert.notEqual(await clients.authenticate(first.client_id, second.client_secret), null);
      clock.advance(1);
      assert.equal(await clients.authenticate(first.client_id, first.client_secret), null, 'old secret after 24 hours');
      assert.notEqual(await clients.authenticate(first.client_id, second.client_secret), null, 'new secret keeps working');
      assert.equal(await clients.rotateSecret('cli_unknown'), null);
    });

    test('a disabled client cannot authenticate until enabled again', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const marker = () => storage.changeMarker();
      const clients = new ClientService(db, randomBytes(32), 'sandbox', new ManualClock(), marker);
      const issued = await clients.create('acme');
      assert.equal(await clients.setDisabled(issued.client_id, true), true);
      assert.equal(await clients.authenticate(issued.client_id, issued.client_secret), null);
      await clients.setDisabled(issued.client_id, false);
      assert.notEqual(await clients.authenticate(issued.client_id, issued.client_secret), null);
    });

    test('rotating with the previous secrets expired now ends every one of them, also one still in an earlier overlap', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock();
      const clients = new ClientService(storage.db, randomBytes(32), 'sandbox', clock, () => storage.changeMarker());
      const first = await clients.create('acme');
      const second = await clients.rotateSecret(first.client_id);
      clock.advance(60_000);
      const third = await clients.rotateSecret(first.client_id, 'now');
      assert.ok(second !== null && third !== null);
      assert.equal(third.previous_secret_expires_at, clock.now().toISOString());
      for (const old of [first.client_secret, second.client_secret]) assert.equal(await clients.authenticate(first.client_id, old), null);
      assert.notEqual(await clients.authenticate(first.client_id, third.client_secret), null);
      const expiries = (
        await storage.db
          .selectFrom('client_secrets')
          .select('expires_at')
          .where('client_id', '=', first.client_id)
          .orderBy('created_at')
          .execute()
      ).map((r) => r.expires_at);
      assert.deepEqual(expiries, [clock.now().getTime(), clock.now().getTime(), null]);
      assert.equal(await clients.rotateSecret('cli_unknown', 'now'), null);
    });

    test('expiring the previous secrets ends the overlap now; the current secret keeps working', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock();
      const clients = new ClientService(storage.db, randomBytes(32), 'sandbox', clock, () => storage.changeMarker());
      const first = await clients.create('acme');
      assert.equal(await clients.expirePreviousSecrets(first.client_id), 0, 'nothing to end before a rotation');
      const second = await clients.rotateSecret(first.client_id);
      assert.ok(second !== null);
      clock.advance(1000);
      assert.notEqual(await clients.authenticate(first.client_id, first.client_secret), null);
      assert.equal(await clients.expirePreviousSecrets(first.client_id), 1);
      assert.equal(await clients.authenticate(first.client_id, first.client_secret), null);
      assert.notEqual(await clients.authenticate(first.client_id, second.client_secret), null);
      assert.equal(await clients.expirePreviousSecrets(first.client_id), 0, 'already ended');
      assert.equal(await clients.expirePreviousSecrets('cli_unknown'), null);
    });

    test('enabling a client keeps when it was disabled, and waits for the second of the disabling to end', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock('2026-11-22T10:00:00.900Z');
      const clients = new ClientService(storage.db, randomBytes(32), 'sandbox', clock, () => storage.changeMarker());
      const issued = await clients.create('acme');
      await clients.setDisabled(issued.client_id, true);
      const disabledAt = clock.now().getTime();
      assert.deepEqual(await clients.state(issued.client_id), { status: 'disabled', disabled_at: disabledAt });
      const started = Date.now();
      await clients.setDisabled(issued.client_id, false);
      const waited = Date.now() - started;
      assert.ok(waited >= 90 && waited < 600, `waited ${waited} ms for the rest of the second`);
      assert.deepEqual(await clients.state(issued.client_id), { status: 'active', disabled_at: disabledAt });
      assert.equal(await clients.setDisabled('cli_unknown', false), false);
    });

    test('a client disabled by another process is refused (at once on SQLite; on PostgreSQL once the change notification arrives), although its secret was checked before', async (t) => {
      const [here, elsewhere] = await openSharedStorages(t, database);
      const key = randomBytes(32);
      const clients = new ClientService(here.db, key, 'sandbox', new ManualClock(), () => here.changeMarker());
      const issued = await clients.create('acme');
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 2; i++) assert.notEqual(await clients.authenticate(issued.client_id, issued.client_secret), null);
      // Another process (its own connections, its own service) disables the client.
      assert.equal(await new ClientService(elsewhere.db, key, 'sandbox', new ManualClock()).setDisabled(issued.client_id, true), true);
      await new Promise((resolve) => setImmediate(resolve));
      // SQLite's marker moves with the other connection's commit; PostgreSQL's with the notification
      // of the change, which comes within milliseconds (docs/production.md), later on a loaded machine.
      let answer = await clients.authenticate(issued.client_id, issued.client_secret);
      for (const until = Date.now() + 5000; answer !== null && database.name !== 'sqlite' && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        answer = await clients.authenticate(issued.client_id, issued.client_secret);
      }
      assert.equal(answer, null);
    });
  });
}

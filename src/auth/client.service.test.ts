import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DATABASES, openSharedStorages, openTestStorage } from '../../test/support/harness.js';
import { ManualClock } from '../lib/clock.js';
import { ClientService, SECRET_OVERLAP_MS } from './client.service.js';

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

    test('a client disabled by another process is refused at once, although its secret was checked before', async (t) => {
      const [here, elsewhere] = await openSharedStorages(t, database);
      const key = randomBytes(32);
      const clients = new ClientService(here.db, key, 'sandbox', new ManualClock(), () => here.changeMarker());
      const issued = await clients.create('acme');
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 2; i++) assert.notEqual(await clients.authenticate(issued.client_id, issued.client_secret), null);
      // Another process (its own connections, its own service) disables the client.
      assert.equal(await new ClientService(elsewhere.db, key, 'sandbox', new ManualClock()).setDisabled(issued.client_id, true), true);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(await clients.authenticate(issued.client_id, issued.client_secret), null);
    });
  });
}

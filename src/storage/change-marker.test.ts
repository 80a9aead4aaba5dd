import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openSharedStorages } from '../../test/support/harness.js';
import type { Storage } from './database.js';

/** Reads `marker` until it differs from `from` (a notification crosses processes asynchronously). */
async function changedFrom(storage: Storage, from: number | null): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (storage.changeMarker() !== from) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

const client = (id: string) => ({ id, name: id, scopes: '[]', status: 'active' as const, created_at: 1, disabled_at: null });

for (const database of DATABASES) {
  describe(`change marker on ${database.name}`, () => {
    test('a change to the clients, by this process or another, changes the marker of both', async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const before = first.changeMarker();
      assert.notEqual(before, null, 'a marker while the database can be heard');
      await second.transact((trx) => trx.insertInto('clients').values(client('cli_other')).execute());
      assert.ok(await changedFrom(first, before), "another process's change reaches this one");

      const mine = first.changeMarker();
      await first.transact((trx) =>
        trx.updateTable('clients').set({ status: 'disabled', disabled_at: 2 }).where('id', '=', 'cli_other').execute(),
      );
      assert.notEqual(first.changeMarker(), mine, "this process's own change, at once");
    });

    test('the marker stays while nothing kept changes (PostgreSQL: an order-path write is not announced)', {
      skip: database.name === 'sqlite' ? 'SQLite changes it at every commit' : false,
    }, async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const before = first.changeMarker();
      await second.transact((trx) =>
        trx
          .insertInto('sandbox_journal')
          .values({ id: 'evt_1', connector: 'x', kind: 'submit', order_id: 'ord_1', payload: null, at: 1 })
          .execute(),
      );
      // A client change after it, to know the first change would have arrived by then.
      await second.transact((trx) => trx.insertInto('clients').values(client('cli_late')).execute());
      assert.ok(await changedFrom(first, before));
      const after = first.changeMarker();
      assert.equal(
        typeof before === 'number' && typeof after === 'number' ? after - before : NaN,
        1,
        'one announcement: the clients change only',
      );
    });
  });
}

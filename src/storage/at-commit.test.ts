import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { atCommit, inSavepoint } from './at-commit.js';
import type { Database } from './schema.js';

const row = (connector: string) => ({ connector, position: null, lease_owner: null, lease_until: 0 });
const insert = (trx: Kysely<Database>, connector: string) => trx.insertInto('connector_positions').values(row(connector)).execute();

for (const database of DATABASES) {
  describe(`savepoints inside a transaction, on ${database.name}`, { concurrency: 1 }, () => {
    test("a savepoint's work and its registered writes commit with the transaction, or are undone alone", async (t) => {
      const storage = await openTestStorage(t, database);
      await storage.transact((trx) => insert(trx, 'taken'));
      await storage.transact(async (trx) => {
        void atCommit(trx, () => insert(trx, 'outer-registered'));
        await insert(trx, 'outer');
        await inSavepoint(trx, 'kept', async () => {
          await insert(trx, 'kept-direct');
          void atCommit(trx, () => insert(trx, 'kept-registered'));
        });
        // Its work succeeds, but a write it registered fails (the key exists): all of it is undone.
        await assert.rejects(
          inSavepoint(trx, 'undone', async () => {
            await insert(trx, 'undone-direct');
            void atCommit(trx, () => insert(trx, 'undone-registered'));
            void atCommit(trx, () => insert(trx, 'taken'));
          }),
        );
        // Its work fails: undone too, and its registered writes are never sent.
        await assert.rejects(
          inSavepoint(trx, 'failed', async () => {
            await insert(trx, 'failed-direct');
            void atCommit(trx, () => insert(trx, 'failed-registered'));
            throw new Error('refused');
          }),
          /refused/,
        );
        await insert(trx, 'after');
      });
      const rows = await storage.db.selectFrom('connector_positions').select('connector').orderBy('connector').execute();
      assert.deepEqual(
        rows.map((r) => r.connector),
        ['after', 'kept-direct', 'kept-registered', 'outer', 'outer-registered', 'taken'],
      );
    });
  });
}

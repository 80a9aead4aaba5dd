import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { PreparedInsert, PreparedQuery } from './prepared.js';

const event = (id: string, type: string, createdAt: number) => ({
  id,
  client_id: null,
  type,
  livemode: 0,
  created_at: createdAt,
  data: '{}',
  subject_ref: null,
});

const byType = new PreparedQuery(2, (db, type: string, after: number) =>
  db
    .selectFrom('events')
    .select(['id', 'created_at'])
    .where('type', '=', type)
    .where('created_at', '>', after)
    .where('livemode', '=', 0)
    .orderBy('id')
    .limit(10),
);

for (const database of DATABASES) {
  describe(`prepared queries on ${database.name}`, () => {
    test('arguments land in their placeholders, constants of the query stay, every run reads afresh', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      await storage.transact(async (trx) => {
        await trx
          .insertInto('events')
          .values([event('evt_1', 'a.x', 10), event('evt_2', 'a.x', 20), event('evt_3', 'b.y', 30)])
          .execute();
      });
      assert.deepEqual(await byType.execute(db, 'a.x', 0), [
        { id: 'evt_1', created_at: 10 },
        { id: 'evt_2', created_at: 20 },
      ]);
      assert.deepEqual(
        await byType.execute(db, 'a.x', 15),
        [{ id: 'evt_2', created_at: 20 }],
        'the second argument, not a value of the first build',
      );
      assert.deepEqual(await byType.execute(db, 'b.y', 0), [{ id: 'evt_3', created_at: 30 }]);
      assert.equal(await byType.first(db, 'c.z', 0), undefined);
      await storage.transact(async (trx) => {
        await trx
          .insertInto('events')
          .values(event('evt_4', 'c.z', 40))
          .execute();
      });
      assert.deepEqual(await byType.first(db, 'c.z', 0), { id: 'evt_4', created_at: 40 }, 'a committed row is seen by the next run');
    });

    test('inside a transaction the query runs on it and sees its uncommitted writes', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      await assert.rejects(
        storage.transact(async (trx) => {
          await trx
            .insertInto('events')
            .values(event('evt_9', 'tx.only', 1))
            .execute();
          assert.deepEqual(await byType.execute(trx, 'tx.only', 0), [{ id: 'evt_9', created_at: 1 }]);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual(await byType.execute(db, 'tx.only', 0), [], 'rolled back, and the read outside saw only committed state');
    });

    test('runMany inserts rows of any count, several to a statement and across chunks, nulls included; a missing column is refused', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const insert = new PreparedInsert('events', 4);
      const rows = Array.from({ length: 11 }, (_, i) => ({
        ...event(`evt_m${String(i).padStart(2, '0')}`, 'many.x', i),
        subject_ref: i % 2 === 0 ? null : `ref_${i}`,
      }));
      for (const count of [1, 3, 7]) {
        const batch = rows.splice(0, count);
        await storage.transact((trx) => insert.runMany(trx, batch));
      }
      await storage.transact((trx) => insert.runMany(trx, []));
      const stored = await db
        .selectFrom('events')
        .select(['id', 'created_at', 'subject_ref'])
        .where('type', '=', 'many.x')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        stored,
        Array.from({ length: 11 }, (_, i) => ({
          id: `evt_m${String(i).padStart(2, '0')}`,
          created_at: i,
          subject_ref: i % 2 === 0 ? null : `ref_${i}`,
        })),
      );
      const { subject_ref: _omitted, ...incomplete } = event('evt_bad', 'many.x', 99);
      await assert.rejects(
        storage.transact((trx) => insert.runMany(trx, [incomplete as never])),
        /column subject_ref has no value/,
      );
    });

    test('a query that does not use each of its arguments is refused', async (t) => {
      const { db } = await openTestStorage(t, database);
      const unused = new PreparedQuery<[string, string], { id: string }>(2, (qb, type: string) =>
        qb.selectFrom('events').select('id').where('type', '=', type),
      );
      await assert.rejects(unused.execute(db, 'a', 'b'), /uses 1 of its 2 arguments/);
    });
  });
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { openStorage } from './database.js';
import { migrateToLatest } from './migrate.js';
import { PreparedInsert, PreparedQuery } from './prepared.js';

async function sqliteStorage(t: import('node:test').TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-gc-'));
  const path = join(dir, 'db.sqlite');
  const storage = await openStorage({ databaseUrl: null, sqlitePath: path, poolSize: 1, sqliteSynchronous: 'FULL' });
  await migrateToLatest(storage.db);
  t.after(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { storage, path };
}

const event = (id: string) => ({ id, client_id: null, type: 'webhook.test', livemode: 0, created_at: 1, data: '{}', subject_ref: null });

test('concurrent units share commits, and each is durable when it resolves', async (t) => {
  const { storage, path } = await sqliteStorage(t);
  // A second, independent connection sees only what has committed.
  const reader = new SqliteDatabase(path, { readonly: true });
  t.after(() => reader.close());
  const count = () => (reader.prepare('select count(*) as n from events').get() as { n: number }).n;
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      storage
        .transact(async (trx) => {
          await trx
            .insertInto('events')
            .values(event(`evt_${i}`))
            .execute();
          return i;
        })
        .then((value) => ({ value, visible: count() })),
    ),
  );
  for (const r of results) assert.ok(r.visible > r.value, 'a resolved unit is already committed');
  assert.equal(count(), 200);
  const before = await storage.transact(async () => 'x');
  assert.equal(before, 'x');
  const stats = storage.commitStats();
  assert.equal(stats.units, 201);
  // Every batch spent time running its units and in its durable COMMIT (an fsync each).
  assert.ok((stats.workSeconds ?? 0) > 0 && (stats.commitSeconds ?? 0) > 0, JSON.stringify(stats));
});

test('a failing unit rolls back alone; the others of its batch commit', async (t) => {
  const { storage } = await sqliteStorage(t);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 30 }, (_, i) =>
      storage.transact(async (trx) => {
        await trx
          .insertInto('events')
          .values(event(`evt_${i}`))
          .execute();
        if (i % 3 === 0) throw new Error(`unit ${i} fails after writing`);
        // A constraint violation inside a unit is also contained by its savepoint.
        if (i % 3 === 1)
          await trx
            .insertInto('events')
            .values(event(`evt_${i}`))
            .execute();
        return i;
      }),
    ),
  );
  const ids = (await storage.db.selectFrom('events').select('id').execute()).map((r) => r.id).sort();
  const expected = Array.from({ length: 30 }, (_, i) => i)
    .filter((i) => i % 3 === 2)
    .map((i) => `evt_${i}`)
    .sort();
  assert.deepEqual(ids, expected);
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 10);
});

const insertEvent = new PreparedInsert('events');
const eventIds = new PreparedQuery(1, (db, type: string) => db.selectFrom('events').select('id').where('type', '=', type).orderBy('id'));

test('prepared statements run directly in a unit: they see its writes, and a failing unit loses them', async (t) => {
  const { storage } = await sqliteStorage(t);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      storage.transact(async (trx) => {
        await insertEvent.run(trx, event(`evt_${String(i).padStart(2, '0')}`));
        const seen = (await eventIds.execute(trx, 'webhook.test')).map((r) => r.id);
        assert.ok(seen.includes(`evt_${String(i).padStart(2, '0')}`), 'the unit reads its own uncommitted insert');
        if (i % 2 === 0) throw new Error(`unit ${i} fails after writing`);
        return seen.length;
      }),
    ),
  );
  const kept = Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 2 === 1);
  assert.deepEqual(
    (await eventIds.execute(storage.db, 'webhook.test')).map((r) => r.id),
    kept.map((i) => `evt_${String(i).padStart(2, '0')}`),
  );
  // Each unit saw the committed units before it and itself, never a failed unit's row.
  const seen = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  assert.deepEqual(
    seen,
    kept.map((_, k) => k + 1),
  );
  assert.ok(storage.commitStats().batches < 20, 'the units shared commits');
});

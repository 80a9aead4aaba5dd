import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { openStorage } from './database.js';
import { migrateToLatest } from './migrate.js';

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

const event = (id: string) => ({ id, client_id: null, type: 'webhook.test', livemode: 0, created_at: 1, data: '{}', subject_ref: null, dispatched_at: null });

test('concurrent units share commits, and each is durable when it resolves', async (t) => {
  const { storage, path } = await sqliteStorage(t);
  // A second, independent connection sees only what has committed.
  const reader = new SqliteDatabase(path, { readonly: true });
  t.after(() => reader.close());
  const count = () => (reader.prepare('select count(*) as n from events').get() as { n: number }).n;
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      storage.transact(async (trx) => {
        await trx.insertInto('events').values(event(`evt_${i}`)).execute();
        return i;
      }).then((value) => ({ value, visible: count() })),
    ),
  );
  for (const r of results) assert.ok(r.visible > r.value, 'a resolved unit is already committed');
  assert.equal(count(), 200);
  const before = await storage.transact(async () => 'x');
  assert.equal(before, 'x');
});

test('a failing unit rolls back alone; the others of its batch commit', async (t) => {
  const { storage } = await sqliteStorage(t);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 30 }, (_, i) =>
      storage.transact(async (trx) => {
        await trx.insertInto('events').values(event(`evt_${i}`)).execute();
        if (i % 3 === 0) throw new Error(`unit ${i} fails after writing`);
        // A constraint violation inside a unit is also contained by its savepoint.
        if (i % 3 === 1) await trx.insertInto('events').values(event(`evt_${i}`)).execute();
        return i;
      }),
    ),
  );
  const ids = (await storage.db.selectFrom('events').select('id').execute()).map((r) => r.id).sort();
  const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 === 2).map((i) => `evt_${i}`).sort();
  assert.deepEqual(ids, expected);
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 10);
});

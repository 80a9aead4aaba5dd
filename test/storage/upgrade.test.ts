import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStorage } from '../../src/storage/database.js';
import { migrateToLatest, migrateUpTo } from '../../src/storage/migrate.js';
import { DATABASES, testEnvironment } from '../support/harness.js';

// Upgrades from a schema an older version left, with its data, to the latest.
for (const database of DATABASES) {
  describe(`upgrades on ${database.name}`, () => {
    test('the event queue: events not yet fanned out are queued, fanned-out ones are not, and dispatched_at is gone', async (t) => {
      const e = testEnvironment(t, database, { CAURI_SEED: 'false' });
      const storage = await openStorage({
        databaseUrl: e.config.databaseUrl,
        sqlitePath: join(e.config.dataDir, 'cauri.sqlite'),
        poolSize: 2,
        sqliteSynchronous: 'NORMAL',
        ...(e.options.pgSchema === undefined ? {} : { pgSchema: e.options.pgSchema }),
      });
      e.closers.push(() => storage.close());
      const { db } = storage;
      await migrateUpTo(db, '2026-11-24T09-00-webhook-queue-indexes', storage.schema);
      const insert = (id: string, dispatchedAt: number | null) =>
        sql`insert into events (id, client_id, type, livemode, created_at, data, subject_ref, dispatched_at)
            values (${id}, null, 'order.created', 0, 1, '{}', null, ${dispatchedAt})`.execute(db);
      await insert('evt_a', 5);
      await insert('evt_b', null);
      await insert('evt_c', null);
      await insert('evt_d', 7);
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-24T10-00-event-queue'), JSON.stringify(report));
      const queued = await db.selectFrom('event_queue').select('event_id').orderBy('event_id').execute();
      assert.deepEqual(queued.map((q) => q.event_id), ['evt_b', 'evt_c']);
      const events = await db.selectFrom('events').selectAll().orderBy('id').execute();
      assert.equal(events.length, 4);
      assert.ok(events.every((row) => !('dispatched_at' in row)), 'the column is dropped');
      // Asking again for a migration already applied changes nothing (and never migrates down).
      assert.deepEqual(await migrateUpTo(db, '2026-11-24T09-00-webhook-queue-indexes', storage.schema), { applied: [] });
      assert.equal((await db.selectFrom('event_queue').select('event_id').execute()).length, 2);
    });
  });
}

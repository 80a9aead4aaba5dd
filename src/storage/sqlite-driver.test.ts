import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStorage, type Storage } from './database.js';
import { migrateToLatest } from './migrate.js';
import { WRITE_LOCK_TIMEOUT_MS } from './sqlite-driver.js';

async function twoConnections(t: import('node:test').TestContext): Promise<[Storage, Storage]> {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-lock-'));
  const options = { databaseUrl: null, sqlitePath: join(dir, 'db.sqlite'), poolSize: 1, sqliteSynchronous: 'NORMAL' as const };
  const a = await openStorage(options);
  const b = await openStorage(options);
  await migrateToLatest(a.db);
  t.after(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return [a, b];
}

const event = (id: string) => ({ id, client_id: null, type: 'webhook.test', livemode: 0, created_at: 1, data: '{}', subject_ref: null, dispatched_at: null });

/**
 * Has `a` write a row and keep its transaction (and SQLite's write lock) open across real timer
 * turns, as a transaction of another process would, until `releaseA` is called.
 */
async function holdWriteLock(a: Storage): Promise<{ releaseA: () => void; first: Promise<void> }> {
  let releaseA!: () => void;
  const held = new Promise<void>((resolve) => (releaseA = resolve));
  let aStarted!: () => void;
  const started = new Promise<void>((resolve) => (aStarted = resolve));
  const first = a.db.transaction().execute(async (trx) => {
    await trx.insertInto('events').values(event('evt_a')).execute();
    aStarted();
    await held;
  });
  await started;
  return { releaseA, first };
}

test('a writer waits for another connection\'s write lock on timers, without stopping the process', async (t) => {
  const [a, b] = await twoConnections(t);
  const { releaseA, first } = await holdWriteLock(a);
  const second = b.transact(async (trx) => {
    // A deferred transaction would read here, then fail to write once A commits.
    const seen = await trx.selectFrom('events').select('id').execute();
    await trx.insertInto('events').values(event('evt_b')).execute();
    return seen.map((r) => r.id);
  });
  // The event loop still turns while B waits: a timer fires and lets A commit.
  await new Promise((resolve) => setTimeout(resolve, 50));
  releaseA();
  await first;
  assert.deepEqual(await second, ['evt_a'], 'B began after A committed and saw its row');
  const rows = await sql<{ id: string }>`select id from events order by id`.execute(a.db);
  assert.deepEqual(rows.rows.map((r) => r.id), ['evt_a', 'evt_b']);
});

test('a writer gives up with SQLITE_BUSY once the lock has been held past the timeout', { timeout: WRITE_LOCK_TIMEOUT_MS * 3 }, async (t) => {
  const [a, b] = await twoConnections(t);
  const { releaseA, first } = await holdWriteLock(a);
  const began = performance.now();
  await assert.rejects(b.db.insertInto('events').values(event('evt_b')).execute(), { code: 'SQLITE_BUSY' });
  assert.ok(performance.now() - began >= WRITE_LOCK_TIMEOUT_MS - 60, 'it waited for the timeout');
  releaseA();
  await first;
  const rows = await sql<{ id: string }>`select id from events`.execute(b.db);
  assert.deepEqual(rows.rows.map((r) => r.id), ['evt_a'], 'the failed write changed nothing');
});

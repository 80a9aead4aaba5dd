import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { openStorage, type Storage } from './database.js';
import { migrateToLatest } from './migrate.js';
import { SQLITE_CACHE_KIB, WRITE_LOCK_TIMEOUT_MS } from './sqlite-driver.js';
import { PreparedQuery } from './prepared.js';

/** Two storages of this process on one fresh database file, and the file's path. */
async function twoConnections(t: import('node:test').TestContext): Promise<[Storage, Storage, string]> {
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
  return [a, b, options.sqlitePath];
}

const event = (id: string) => ({ id, client_id: null, type: 'webhook.test', livemode: 0, created_at: 1, data: '{}', subject_ref: null });

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

test("a writer waits for another connection's write lock on timers, without stopping the process", async (t) => {
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
  assert.deepEqual(
    rows.rows.map((r) => r.id),
    ['evt_a', 'evt_b'],
  );
});

test('a writer gives up with SQLITE_BUSY once the lock has been held past the timeout', {
  timeout: WRITE_LOCK_TIMEOUT_MS * 3,
}, async (t) => {
  const [a, b] = await twoConnections(t);
  const { releaseA, first } = await holdWriteLock(a);
  const began = performance.now();
  await assert.rejects(b.db.insertInto('events').values(event('evt_b')).execute(), { code: 'SQLITE_BUSY' });
  assert.ok(performance.now() - began >= WRITE_LOCK_TIMEOUT_MS - 60, 'it waited for the timeout');
  releaseA();
  await first;
  const rows = await sql<{ id: string }>`select id from events`.execute(b.db);
  assert.deepEqual(
    rows.rows.map((r) => r.id),
    ['evt_a'],
    'the failed write changed nothing',
  );
});

const INSERT_EVENT = `insert into events (id, client_id, type, livemode, created_at, data, subject_ref) values (?, null, 'webhook.test', 0, 1, '{}', null)`;
const eventIds = new PreparedQuery(0, (db) => db.selectFrom('events').select('id').orderBy('id'));
const ids = async (storage: Storage) => (await eventIds.execute(storage.db)).map((r) => r.id);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("reads of one event-loop turn share a snapshot; another process's commit is seen from the next turn", async (t) => {
  const [a, , path] = await twoConnections(t);
  // Another process: a plain connection of its own to the same file.
  const other = new SqliteDatabase(path);
  t.after(() => other.close());
  assert.deepEqual(await ids(a), []);
  const markerBefore = a.changeMarker();
  other.prepare(INSERT_EVENT).run('evt_x');
  assert.deepEqual(await ids(a), [], 'same turn: the snapshot taken before the commit');
  assert.equal(a.changeMarker(), markerBefore, 'the change marker belongs to the same snapshot');
  await nextTurn();
  assert.deepEqual(await ids(a), ['evt_x'], 'next turn: a new snapshot');
  assert.notEqual(a.changeMarker(), markerBefore);
});

test('a commit through any connection of this process is seen by the very next read', async (t) => {
  const [a, b] = await twoConnections(t);
  assert.deepEqual(await ids(a), [], 'a snapshot is open');
  await a.db.insertInto('events').values(event('evt_a')).execute();
  assert.deepEqual(await ids(a), ['evt_a'], 'its own write outside a transaction');
  await a.db.transaction().execute((trx) => trx.insertInto('events').values(event('evt_b')).execute());
  assert.deepEqual(await ids(a), ['evt_a', 'evt_b'], 'its own transaction');
  assert.deepEqual(await ids(b), ['evt_a', 'evt_b'], 'the other storage opens its snapshot now');
  await a.db.insertInto('events').values(event('evt_c')).execute();
  assert.deepEqual(await ids(b), ['evt_a', 'evt_b', 'evt_c'], "another storage's commit, in the same turn");
});

test('reads made while transactions are open do not keep the WAL from starting over', async (t) => {
  const [a, , path] = await twoConnections(t);
  const payload = 'x'.repeat(16_000);
  // About 3,000 pages written in all, three times SQLite's checkpoint threshold: each transaction
  // reads through the read-only connection (another request's read, in the same turn) before it commits.
  for (let i = 0; i < 750; i++) {
    await a.db.transaction().execute(async (trx) => {
      await ids(a);
      await trx
        .insertInto('events')
        .values({ ...event(`evt_${String(i).padStart(4, '0')}`), data: JSON.stringify({ payload }) })
        .execute();
    });
  }
  const walBytes = statSync(`${path}-wal`).size;
  assert.ok(walBytes < 8 * 1024 * 1024, `WAL is ${walBytes} bytes; it starts over once checkpointed (about 4 MB at most)`);
});

test('the writer keeps statement journals in memory, and both connections have the larger page cache', async (t) => {
  const [a] = await twoConnections(t);
  const onWriter = await a.db.transaction().execute(async (trx) => ({
    tempStore: (await sql<{ temp_store: number }>`pragma temp_store`.execute(trx)).rows[0]?.temp_store,
    cacheSize: (await sql<{ cache_size: number }>`pragma cache_size`.execute(trx)).rows[0]?.cache_size,
  }));
  assert.deepEqual(onWriter, { tempStore: 2, cacheSize: -SQLITE_CACHE_KIB });
  const onReader = (await sql<{ cache_size: number }>`pragma cache_size`.execute(a.db)).rows[0]?.cache_size;
  assert.equal(onReader, -SQLITE_CACHE_KIB);
});

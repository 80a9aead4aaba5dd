import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../../src/app.js';
import { DATABASES, freshEnvironment } from '../support/harness.js';
import { spawnService } from '../support/process.js';

// Processes sharing one SQLite file all migrate, seed and create keys at start. A transaction that
// read before writing used to fail at once with SQLITE_BUSY when another process had committed in
// between; transactions now take the write lock first and wait for it on timers.
test('four service processes started at once on one fresh SQLite database all come up and agree', { timeout: 150_000 }, async (t) => {
  for (let round = 0; round < 3; round++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'cauri-start-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' };
    const services = await Promise.all([1, 2, 3, 4].map(() => spawnService(t, env)));
    const documents = await Promise.all(services.map(async (s) => (await fetch(`${s.base}/.well-known/cauri`)).text()));
    const partners = await Promise.all(services.map(async (s) => (await fetch(`${s.base}/v1/sgi/partners`)).text()));
    for (const d of documents) assert.equal(d, documents[0], 'every process publishes the same signing keys');
    for (const p of partners) assert.equal(p, partners[0], 'every process serves the same partner directory');
    const document = JSON.parse(documents[0] ?? '{}') as { keys: unknown[] };
    assert.equal(document.keys.length, 1, 'one signing key, not one per process');
  }
});

// Kysely's migrator reads the catalog of the whole database before it takes its advisory lock, so a
// process starting while another migrates (its own schema or another one) used to fail at start with
// "relation ... does not exist" or a duplicate bookkeeping table. It now starts its run over.
test('on PostgreSQL, processes migrating at once, in one schema and in others, all come up', {
  skip: DATABASES.length < 2,
  timeout: 120_000,
}, async (t) => {
  const postgres = DATABASES.find((d) => d.name === 'postgres');
  assert.ok(postgres);
  for (let round = 0; round < 3; round++) {
    const shared = freshEnvironment(t, postgres);
    const others = [freshEnvironment(t, postgres), freshEnvironment(t, postgres)];
    const storages = await Promise.all(
      [shared, shared, shared, ...others].map(async (e) => {
        const storage = await openDatabase(e.config, e.options);
        e.closers.push(() => storage.close());
        return storage;
      }),
    );
    const counts = await Promise.all(
      storages.map(
        async (s) =>
          (
            await s.db
              .selectFrom('market_calendars')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
      ),
    );
    for (const n of counts) assert.ok(Number(n) > 0, 'every process sees the migrated schema with its shipped calendars');
  }
});

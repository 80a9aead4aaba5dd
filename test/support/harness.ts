import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { parseConfig, type Config } from '../../src/config/config.js';
import { createRuntime, openDatabase, type Runtime, type RuntimeOptions } from '../../src/app.js';
import { openStorage, type Storage, type StorageOptions } from '../../src/storage/database.js';
import { checkResponsesAgainstDocument } from './conformance.js';
import { markMigrated, releaseSchema, takeEmptiedSchema } from './pg-schemas.js';

export interface DatabaseCase {
  name: 'sqlite' | 'postgres';
  url: string | null;
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export const DATABASES: readonly DatabaseCase[] = [
  { name: 'sqlite', url: null },
  ...(process.env.TEST_DATABASE_URL ? [{ name: 'postgres' as const, url: process.env.TEST_DATABASE_URL }] : []),
];

export interface TestEnvironment {
  config: Config;
  options: RuntimeOptions;
  /** Closes what was opened in this environment, before its data folder and schema are removed. */
  closers: (() => Promise<void>)[];
  /**
   * Responses of this environment's runtimes that break the published OpenAPI document (an
   * undocumented status, a missing header, a body outside its schema): the test fails with them
   * once everything is closed.
   */
  responseProblems: string[];
}

/**
 * An isolated deployment for one test, with an empty database: its own data folder (removed when the
 * test ends) and, on PostgreSQL, a schema of its own. That schema is either new or one an earlier
 * test of this process used, emptied, with every migration applied (see pg-schemas.ts): creating the
 * tables of a new one costs PostgreSQL a third of a second. A test of what the first start on a new
 * database does takes a freshEnvironment.
 */
export function testEnvironment(
  t: TestContext,
  db: DatabaseCase,
  env: Record<string, string> = {},
  options: RuntimeOptions = {},
): TestEnvironment {
  return environment(t, db, env, options, true);
}

/** As testEnvironment, always on a new PostgreSQL schema, which no migration has touched. */
export function freshEnvironment(
  t: TestContext,
  db: DatabaseCase,
  env: Record<string, string> = {},
  options: RuntimeOptions = {},
): TestEnvironment {
  return environment(t, db, env, options, false);
}

/**
 * The PostgreSQL database of TEST_DATABASE_URL each environment's schema is in. The schemas are
 * checked and emptied there, not through the environment's own DATABASE_URL, which a test may point
 * at a proxy that counts its statements.
 */
const testDatabases = new WeakMap<TestEnvironment, string>();

function environment(
  t: TestContext,
  db: DatabaseCase,
  env: Record<string, string>,
  options: RuntimeOptions,
  reuse: boolean,
): TestEnvironment {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-test-'));
  const pgSchema = (reuse && db.url !== null ? takeEmptiedSchema() : undefined) ?? `t_${randomBytes(6).toString('hex')}`;
  const config = parseConfig({
    CAURI_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CAURI_MASTER_KEY: randomBytes(32).toString('hex'),
    CAURI_SQLITE_SYNCHRONOUS: 'NORMAL',
    // Tests on manual clocks start at any day and hour: the simulated exchange trades at any hour
    // unless a test asks for the exchange's phases.
    CAURI_SANDBOX_MARKET_HOURS: 'always',
    ...(db.url === null ? {} : { DATABASE_URL: db.url }),
    ...env,
  });
  const closers: (() => Promise<void>)[] = [];
  const responseProblems: string[] = [];
  t.after(async () => {
    // Everything that uses the database closes first (newest first). The PostgreSQL schema is not
    // dropped here: Kysely's migrator introspects every schema of the database, and a schema dropped
    // by one test file while another migrates makes that introspection fail. The test runner drops
    // the test schemas before and after the whole run (scripts/run-tests.mjs).
    for (const close of closers.reverse()) await close();
    rmSync(dataDir, { recursive: true, force: true });
    // These come from hooks added now, so that they run after every other hook of the test (the
    // test's own clean-up included, processes it started stopped): a hook that throws skips the hooks
    // after it, and then the schema is simply not reused.
    if (db.url !== null) {
      const url = db.url;
      t.after(() => releaseSchema(url, pgSchema));
    }
    t.after(() => {
      if (responseProblems.length === 0) return;
      const shown = [...new Set(responseProblems)];
      throw new Error(
        `${shown.length} response(s) of this test break the published OpenAPI document (GET /v1/openapi.json); describe them in the route's schema or fix the response (docs/api-conventions.md):\n- ${shown.slice(0, 20).join('\n- ')}`,
      );
    });
  });
  const e: TestEnvironment = { config, options: { ...options, ...(db.url === null ? {} : { pgSchema }) }, closers, responseProblems };
  if (db.url !== null) testDatabases.set(e, db.url);
  return e;
}

/** Notes that the environment's schema holds the latest migrations, as its runtime left them. */
function migrated(e: TestEnvironment): void {
  const url = testDatabases.get(e);
  if (url !== undefined && e.options.pgSchema !== undefined) markMigrated(url, e.options.pgSchema);
}

export async function startRuntime(
  t: TestContext,
  db: DatabaseCase,
  env: Record<string, string> = {},
  options: RuntimeOptions = {},
): Promise<Runtime> {
  return startRuntimeIn(t, testEnvironment(t, db, env, options));
}

/** Another process of the same deployment: same database, same master key. */
export async function startRuntimeIn(_t: TestContext, e: TestEnvironment): Promise<Runtime> {
  const extendApp = e.options.extendApp;
  const runtime = await createRuntime(e.config, {
    ...e.options,
    extendApp: async (app) => {
      checkResponsesAgainstDocument(app, e.responseProblems);
      await extendApp?.(app);
    },
  });
  migrated(e);
  let closed = false;
  e.closers.push(async () => {
    if (!closed) await runtime.close();
  });
  const close = runtime.close.bind(runtime);
  // A test may close a runtime itself (a simulated crash); closing twice is then skipped.
  return Object.assign(runtime, {
    close: async () => {
      closed = true;
      await close();
    },
  });
}

/**
 * A storage whose database has no migration applied (openTestStorage applies them all): for upgrade
 * tests and tests of the storage layer itself. `options` overrides the pool's settings.
 */
export async function openUnmigratedStorage(
  t: TestContext,
  db: DatabaseCase,
  options: Partial<Pick<StorageOptions, 'poolSize' | 'pgPreparedStatements'>> = {},
): Promise<Storage> {
  const e = freshEnvironment(t, db, { CAURI_SEED: 'false' });
  const storage = await openStorage({
    databaseUrl: e.config.databaseUrl,
    sqlitePath: join(e.config.dataDir, 'cauri.sqlite'),
    poolSize: 2,
    sqliteSynchronous: 'NORMAL',
    ...(e.options.pgSchema === undefined ? {} : { pgSchema: e.options.pgSchema }),
    ...options,
  });
  e.closers.push(() => storage.close());
  return storage;
}

export async function openTestStorage(t: TestContext, db: DatabaseCase, env: Record<string, string> = {}): Promise<Storage> {
  const e = testEnvironment(t, db, { CAURI_SEED: 'false', ...env });
  const storage = await openDatabase(e.config, e.options);
  e.closers.push(() => storage.close());
  migrated(e);
  return storage;
}

/**
 * Two storages over one database, as two processes sharing it would have (each its own connections);
 * both closed after the test.
 */
export async function openSharedStorages(t: TestContext, db: DatabaseCase): Promise<[Storage, Storage]> {
  const e = testEnvironment(t, db, { CAURI_SEED: 'false' });
  const first = await openDatabase(e.config, e.options);
  e.closers.push(() => first.close());
  const second = await openDatabase(e.config, e.options);
  e.closers.push(() => second.close());
  migrated(e);
  return [first, second];
}

/** Starts the runtime's HTTP server on a loopback port and returns its base URL. */
export async function listen(runtime: Runtime): Promise<string> {
  return runtime.app.listen({ host: '127.0.0.1', port: 0 });
}

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient } from '../support/api.js';
import { runCli, spawnService } from '../support/process.js';

type Call = (method: string, path: string, body: unknown, headers: Record<string, string>) => Promise<Response>;

/**
 * Issues every kind of secret the API shows once, each through its idempotent route, and replays
 * each: a webhook endpoint's creation and two rotations of its secret, and the client's own secret
 * rotation. Returns the secrets. Every replay must be the first response, byte for byte.
 */
async function issueSecrets(call: Call): Promise<string[]> {
  const secrets: string[] = [];
  const twice = async (path: string, body: unknown, member: string, expected: number) => {
    const key = randomUUID();
    const first = await call('POST', path, body, { 'idempotency-key': key });
    const text = await first.text();
    assert.equal(first.status, expected, text);
    const replay = await call('POST', path, body, { 'idempotency-key': key });
    assert.equal(replay.status, expected);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(await replay.text(), text, 'a replay is the first response, byte for byte');
    const parsed = JSON.parse(text) as Record<string, string>;
    secrets.push(parsed[member] as string);
    return parsed;
  };
  const endpoint = await twice(
    '/v1/webhooks/endpoints',
    { url: 'https://hooks.example.com/cauri', events: ['order.created'], description: 'Back office' },
    'secret',
    201,
  );
  await twice(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`, {}, 'secret', 200);
  await twice(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`, {}, 'secret', 200);
  await twice('/v1/auth/rotate-secret', {}, 'client_secret', 200);
  for (const secret of secrets) assert.match(secret, /^(whsec|sk_test)_/);
  return secrets;
}

function assertAbsent(where: string, haystack: Buffer, secrets: readonly string[]): void {
  for (const secret of secrets)
    assert.equal(haystack.includes(Buffer.from(secret)), false, `${where} holds the secret ${secret.slice(0, 10)}...`);
}

/** The database's files as they are on disk: the main file, its write-ahead log and its index. */
function assertAbsentFromFiles(path: string, secrets: readonly string[]): string[] {
  const present = [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
  for (const file of present) assertAbsent(file, readFileSync(file), secrets);
  return present;
}

test('SQLite: no secret shown once lies in clear in the database files or the logs, while running and after shutdown', {
  timeout: 60_000,
}, async (t: TestContext) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-secrets-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_WORKERS: 'none', LOG_LEVEL: 'trace' };
  const created = await runCli(['clients', 'create', '--name', 'secrets', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
  const service = await spawnService(t, env);
  const tokenRes = await fetch(`${service.base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
  });
  const { access_token: token } = (await tokenRes.json()) as { access_token: string };
  const call: Call = (method, path, body, headers) =>
    fetch(`${service.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  const secrets = [client.client_secret, ...(await issueSecrets(call))];
  const database = join(dataDir, 'cauri.sqlite');
  const files = assertAbsentFromFiles(database, secrets);
  assert.ok(files.includes(`${database}-wal`), 'the write-ahead log was searched while it held the recent writes');
  await service.stop();
  assertAbsentFromFiles(database, secrets);
  const lines = service
    .output()
    .split('\n')
    .filter((line) => line.includes('"request_id"'));
  assert.ok(lines.length >= 14, 'every request was logged (at trace level), and the lines searched');
  assertAbsent('the logs', Buffer.from(service.output()), secrets);
});

const postgres = DATABASES.find((d) => d.name === 'postgres');

test('PostgreSQL: no secret shown once lies in clear in any row of any table', {
  skip: postgres === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, async (t) => {
  const runtime = await startRuntime(t, postgres ?? DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const api = await apiClient(runtime, await listen(runtime));
  const secrets = [api.clientSecret, ...(await issueSecrets(api.call))];
  const { db, schema } = runtime.storage;
  const tables = await sql<{
    name: string;
  }>`select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db);
  assert.ok(tables.rows.some((r) => r.name === 'idempotency_keys'));
  let rows = 0;
  for (const { name } of tables.rows) {
    // Each row as one text: every column, whatever its type.
    const all = await sql<{ row: string }>`select t::text as row from ${sql.table(`${schema}.${name}`)} t`.execute(db);
    for (const { row } of all.rows) assertAbsent(`a row of ${name}`, Buffer.from(row), secrets);
    rows += all.rows.length;
  }
  const records = await db.selectFrom('idempotency_keys').selectAll().execute();
  assert.equal(records.length, 4, 'the four responses that carry a secret are kept for replays');
  assert.ok(rows > records.length);
});

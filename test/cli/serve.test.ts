import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenFailure } from '../../src/cli/commands/serve.js';
import { runCli, spawnRole, spawnService } from '../support/process.js';

test('a second `cauri serve` on a busy port says so in one line and exits 1', { timeout: 60_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-serve-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' };
  const { base } = await spawnService(t, env);
  const port = new URL(base).port;

  const second = await runCli(['serve'], { ...env, PORT: port, LOG_LEVEL: 'info' });
  assert.equal(second.code, 1);
  assert.equal(
    second.stderr,
    `cauri: cannot listen on 127.0.0.1:${port}: the address is already in use (another process listens there; stop it or set PORT)\n`,
  );
  assert.doesNotMatch(second.stdout, /EADDRINUSE|\n\s+at /, 'no stack trace');
  assert.equal((await fetch(`${base}/healthz`)).status, 200, 'the first one still serves');
});

test('each listening failure names the address in one line', () => {
  assert.match(listenFailure({ code: 'EACCES' }, '0.0.0.0', 80) ?? '', /^cannot listen on 0\.0\.0\.0:80: permission denied/);
  assert.match(
    listenFailure({ code: 'EADDRNOTAVAIL' }, '10.9.9.9', 8080) ?? '',
    /^cannot listen on 10\.9\.9\.9:8080: the address is not one of this machine's/,
  );
  assert.match(listenFailure({ code: 'EADDRINUSE' }, '::1', 8080) ?? '', /^cannot listen on \[::1\]:8080: the address is already in use/);
  assert.equal(listenFailure(new Error('something else'), '127.0.0.1', 8080), null);
});

test('`cauri serve --role` runs the API, the workers or both; an unknown role is refused before anything is opened', {
  timeout: 90_000,
}, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-role-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' };

  const refused = await runCli(['serve', '--role', 'web'], { ...env, LOG_LEVEL: 'info' });
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, 'cauri: --role must be one of api, worker, all (got "web")\n');
  assert.equal(refused.stdout, '');
  assert.deepEqual(readdirSync(dataDir), [], 'no database was created');

  // The API alone: it listens and logs its role; no worker runs in it.
  const api = await spawnRole(t, 'api', env);
  assert.match(api.output(), /"role":"api","workers":"none"/);
  assert.equal((await fetch(`${api.base}/readyz`)).status, 200);
  // The workers alone: no socket; the older `CAURI_WORKERS=none` is overridden by the explicit role.
  const worker = await spawnRole(t, 'worker', { ...env, CAURI_WORKERS: 'none' });
  assert.match(worker.output(), /"role":"worker".*workers running/);
  assert.doesNotMatch(worker.output(), /listening/);
  // `CAURI_WORKERS=none` without a role still means an API process.
  const legacy = await spawnService(t, { ...env, CAURI_WORKERS: 'none' });
  assert.match(legacy.output(), /"role":"api","workers":"none"/);
  await Promise.all([api.stop(), worker.stop(), legacy.stop()]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenFailure } from '../../src/cli/commands/serve.js';
import { runCli, spawnService } from '../support/process.js';

test('a second `cauri serve` on a busy port says so in one line and exits 1', { timeout: 60_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-serve-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dataDir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' };
  const { base } = await spawnService(t, env);
  const port = new URL(base).port;

  const second = await runCli(['serve'], { ...env, PORT: port, LOG_LEVEL: 'info' });
  assert.equal(second.code, 1);
  assert.equal(second.stderr, `cauri: cannot listen on 127.0.0.1:${port}: the address is already in use (another process listens there; stop it or set PORT)\n`);
  assert.doesNotMatch(second.stdout, /EADDRINUSE|\n\s+at /, 'no stack trace');
  assert.equal((await fetch(`${base}/healthz`)).status, 200, 'the first one still serves');
});

test('each listening failure names the address in one line', () => {
  assert.match(listenFailure({ code: 'EACCES' }, '0.0.0.0', 80) ?? '', /^cannot listen on 0\.0\.0\.0:80: permission denied/);
  assert.match(listenFailure({ code: 'EADDRNOTAVAIL' }, '10.9.9.9', 8080) ?? '', /^cannot listen on 10\.9\.9\.9:8080: the address is not one of this machine's/);
  assert.match(listenFailure({ code: 'EADDRINUSE' }, '::1', 8080) ?? '', /^cannot listen on \[::1\]:8080: the address is already in use/);
  assert.equal(listenFailure(new Error('something else'), '127.0.0.1', 8080), null);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnService } from '../support/process.js';
import { fencedBlocks, runnableShellBlocks, shellScript } from './markdown.js';
import { runBash } from './shell.js';

// Compiled to dist/test/docs/: the repository root is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = 'README.md';

/**
 * README.md's first call, pasted as written: its `sh` blocks not marked `no-test`, in one bash
 * session at the repository root, against a fresh sandbox started as a separate process. The `no-test`
 * blocks are the two commands themselves (starting the service, running the tests) and `BASE`, which
 * the test sets to the spawned service's address.
 */
test('README.md: the first call runs as written', { timeout: 60_000 }, async (t) => {
  const markdown = readFileSync(join(ROOT, DOC), 'utf8');
  const skipped = fencedBlocks(markdown).filter((b) => b.language === 'sh' && b.attributes.includes('no-test'));
  assert.deepEqual(
    skipped.map((b) => b.code.split('\n')[0]?.split(/\s+/).slice(0, 3).join(' ')),
    ['npm install &&', 'BASE=http://127.0.0.1:8080'],
    'only the two commands and the address are left to the test',
  );
  const blocks = runnableShellBlocks(markdown);
  assert.ok(blocks.length >= 1);

  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-readme-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const deployment = {
    CAURI_MODE: 'sandbox',
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: '',
    CAURI_PUBLIC_URL: '',
    DATABASE_URL: '',
    REDIS_URL: '',
    CAURI_SEED: 'true',
    HOST: '127.0.0.1',
  };
  const { base } = await spawnService(t, deployment);
  const result = await runBash(shellScript(blocks, DOC), { cwd: ROOT, env: { ...process.env, ...deployment, BASE: base, LOG_LEVEL: 'silent' }, timeoutMs: 45_000 });
  const out = result.stdout;
  const context = `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${out}\n--- stderr\n${result.stderr}`;
  assert.equal(result.code, 0, context);
  // The directory page, with its cursor header, and an attestation issued with the token.
  assert.match(out, /"token_endpoint":"http:\/\/[^"]+\/v1\/auth\/token"/, context);
  assert.match(out, /HTTP\/1\.1 200 OK\r?\n/, context);
  assert.match(out, /^x-cursor-next: /im, context);
  assert.match(out, /"data":\[\{"id":"sgi_[0-9a-z]{26}"/, context);
  assert.match(out, /\{"id":"att_[0-9a-z]{26}","version":"1.0","subject_id":"inv-0001","level":"KYC1"/, context);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from './config.js';
import { resolveMasterKey } from './master-key.js';

function sandboxIn(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-master-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, config: parseConfig({ CAURI_DATA_DIR: dir }) };
}

test('a sandbox without CAURI_MASTER_KEY writes its key once, whole, readable by its owner only', (t) => {
  const { dir, config } = sandboxIn(t);
  const key = resolveMasterKey(config);
  assert.equal(key.length, 32);
  const path = join(dir, 'master.key');
  assert.equal(readFileSync(path, 'utf8'), `${key.toString('hex')}\n`);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.deepEqual(
    readdirSync(dir).filter((name) => name.startsWith('master.key')),
    ['master.key'],
    'no partial file is left beside it',
  );
  assert.deepEqual(resolveMasterKey(config), key, 'the next start reads the same key');
});

test('an empty master.key, left by a stop between creating the file and writing it, is replaced by a key', (t) => {
  const { dir, config } = sandboxIn(t);
  const path = join(dir, 'master.key');
  writeFileSync(path, '', { mode: 0o600 });
  const key = resolveMasterKey(config);
  assert.equal(key.length, 32);
  assert.equal(readFileSync(path, 'utf8'), `${key.toString('hex')}\n`);
  assert.deepEqual(resolveMasterKey(config), key);
});

test('a master.key that holds something else than a key stops start-up, and is kept as it is', (t) => {
  const { dir, config } = sandboxIn(t);
  const path = join(dir, 'master.key');
  writeFileSync(path, 'not a key\n', { mode: 0o600 });
  assert.throws(() => resolveMasterKey(config), /CAURI_MASTER_KEY: must be 32 bytes/);
  assert.equal(readFileSync(path, 'utf8'), 'not a key\n');
});

test('the key of CAURI_MASTER_KEY is used as given; production requires it', (t) => {
  const { dir } = sandboxIn(t);
  const given = parseConfig({ CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: 'ab'.repeat(32) });
  assert.deepEqual(resolveMasterKey(given), Buffer.from('ab'.repeat(32), 'hex'));
  assert.deepEqual(readdirSync(dir), [], 'nothing is written');
  assert.throws(() => resolveMasterKey({ ...given, masterKey: null, mode: 'production' }), /CAURI_MASTER_KEY: is required in production/);
});

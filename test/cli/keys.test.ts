import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/process.js';

const WHOLE_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

test('keys rotate and keys list give the windows in whole seconds, as the key document publishes them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-keys-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dir };
  // The first rotation of an empty database creates the first key; the second closes its window.
  assert.equal((await runCli(['keys', 'rotate'], env)).code, 0);
  const rotated = await runCli(['keys', 'rotate', '--json'], env);
  assert.equal(rotated.code, 0, rotated.stderr);
  const rotation = JSON.parse(rotated.stdout) as { key_id: string; valid_from: string };
  assert.match(rotation.valid_from, WHOLE_SECONDS);
  const listed = await runCli(['keys', 'list', '--json'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const keys = JSON.parse(listed.stdout) as { key_id: string; valid_from: string; valid_until: string }[];
  for (const key of keys) {
    assert.match(key.valid_from, WHOLE_SECONDS);
    assert.match(key.valid_until, WHOLE_SECONDS);
  }
  assert.equal(keys.at(-1)?.key_id, rotation.key_id);
  assert.equal(keys.at(-1)?.valid_from, rotation.valid_from);
  assert.equal(keys.at(-2)?.valid_until, rotation.valid_from, 'consecutive windows');
});

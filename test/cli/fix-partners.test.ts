import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/app.js';
import { parseConfig } from '../../src/config/config.js';
import { deriveKey } from '../../src/lib/crypto.js';
import { FixCredentialSealer } from '../../src/routing/fix/credentials.js';
import { runCli } from '../support/process.js';

/** A deployment on SQLite in a temporary folder, run through the `cauri` command. */
function deployment(t: TestContext, env: Record<string, string> = {}): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-fix-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SEED: 'false', ...env };
}

function partnersFile(env: Record<string, string>, fix: Record<string, unknown>): string {
  const path = join(env.CAURI_DATA_DIR as string, 'partners.json');
  writeFileSync(path, JSON.stringify([{ name: 'Fix Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix }]));
  return path;
}

const FIX = { host: 'fix.sgi.example', port: 9876, sender_comp_id: 'CAURI', target_comp_id: 'SGI1' };

test('partners credentials stores the FIX logon sealed with the master key, read from standard input', async (t) => {
  const env = deployment(t);
  const imported = await runCli(['partners', 'import', partnersFile(env, FIX), '--json'], env);
  assert.equal(imported.code, 0, imported.stderr);
  const id = (JSON.parse(imported.stdout) as { applied: { id: string }[] }).applied[0]?.id ?? '';

  const stored = await runCli(['partners', 'credentials', id, '--username', 'cauri-user', '--password-stdin'], env, 's3cret pass\n');
  assert.equal(stored.code, 0, stored.stderr);
  const config = parseConfig(env);
  const storage = await openDatabase(config);
  try {
    const row = await storage.db.selectFrom('partners').select(['fix_credentials']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(row.fix_credentials !== null && !row.fix_credentials.includes('s3cret'));
    const sealer = new FixCredentialSealer(deriveKey(config.masterKey as Buffer, 'fix-credentials'));
    assert.deepEqual(sealer.open(id, row.fix_credentials), { username: 'cauri-user', password: 's3cret pass' });
    assert.throws(() => sealer.open('sgi_other', row.fix_credentials as string), 'sealed for this partner only');
  } finally {
    await storage.close();
  }

  assert.equal(
    (await runCli(['partners', 'credentials', id, '--username', 'u', '--password-stdin'], env, '')).code,
    1,
    'an empty password is refused',
  );
  assert.match(
    (await runCli(['partners', 'credentials', 'sgi_nobody', '--username', 'u', '--password-stdin'], env, 'x\n')).stderr,
    /no partner sgi_nobody/,
  );
  const sessions = await runCli(['partners', 'sessions', '--json'], env);
  assert.deepEqual(JSON.parse(sessions.stdout), []);
});

test('production refuses a plaintext FIX partner unless CAURI_FIX_ALLOW_PLAINTEXT=true', async (t) => {
  const production = { CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.example' };
  const env = deployment(t, production);
  const file = partnersFile(env, { ...FIX, tls: false });
  const refused = await runCli(['partners', 'import', file], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stdout, /row 0: rejected: fix\.tls tls/);
  const allowed = await runCli(['partners', 'import', file], { ...env, CAURI_FIX_ALLOW_PLAINTEXT: 'true' });
  assert.equal(allowed.code, 0, allowed.stdout);
});

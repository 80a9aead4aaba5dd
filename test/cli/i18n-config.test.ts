import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frenchConfigError } from '../../src/cli/i18n/config.fr.js';
import { ConfigError, ensureDataDir, parseConfig } from '../../src/config/config.js';
import { unreachableDatabase } from '../../src/services.js';
import { runCli } from '../support/process.js';

const ENGLISH = /\b(must|required|got|cannot|is not|separated by)\b/;

function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  assert.fail('no ConfigError');
}

test('every refusal of the configuration reads in French on a French command line', (t) => {
  const evm = {
    CAURI_ANCHOR: 'evm',
    CAURI_EVM_RPC_URL: 'http://127.0.0.1:8545',
    CAURI_EVM_PRIVATE_KEY: 'a'.repeat(64),
    CAURI_EVM_CHAIN_NAME: 'anvil',
  };
  const cases: Record<string, string>[] = [
    { CAURI_MODE: 'staging' },
    { PORT: 'eighty' },
    { PORT: '70000' },
    { HOST: 'not a host!' },
    { DATABASE_URL: 'mysql://x' },
    { REDIS_URL: 'http://x' },
    { DATABASE_URL: 'postgres://db.example:99999/cauri' },
    { CAURI_MODE: 'production' },
    { CAURI_MASTER_KEY: 'short' },
    { CAURI_PUBLIC_URL: 'not-a-url' },
    { CAURI_PUBLIC_URL: 'ftp://example.com' },
    { CAURI_CORS_ORIGINS: 'nope' },
    { CAURI_CORS_ORIGINS: 'ftp://example.com' },
    { CAURI_CORS_ORIGINS: 'https://example.com/path' },
    { CAURI_TRUST_PROXY: 'somewhere' },
    { CAURI_HTTP_HEADERS_TIMEOUT_MS: '60000', CAURI_HTTP_REQUEST_TIMEOUT_MS: '30000' },
    { CAURI_ANCHOR: 'evm' },
    { ...evm, CAURI_EVM_PRIVATE_KEY: 'xyz' },
    { ...evm, CAURI_EVM_CHAIN_NAME: 'Not Lower' },
    { ...evm, CAURI_EVM_TO: '0x12' },
    { ...evm, CAURI_MODE: 'production', CAURI_MASTER_KEY: 'a'.repeat(64) },
  ];
  const errors = cases.map((env) => refusal(() => parseConfig(env)));
  const dir = mkdtempSync(join(tmpdir(), 'cauri-config-fr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'file'), '');
  errors.push(refusal(() => ensureDataDir(join(dir, 'file'))));
  errors.push(refusal(() => ensureDataDir(join(dir, 'file', 'below'))));
  const down = unreachableDatabase(
    'postgres://db.example:5432/cauri',
    Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' }),
  );
  assert.ok(down !== null);
  errors.push(down);
  assert.equal(new Set(errors.map((e) => e.message)).size, errors.length, 'each case a different refusal');
  for (const error of errors) {
    const french = frenchConfigError(error.variable, error.message);
    assert.ok(french.startsWith(`${error.variable} : `), `${error.message}\n${french}`);
    assert.doesNotMatch(french, ENGLISH, error.message);
  }
});

test('cauri in French prints a configuration error in French, exit status 2; in English as before', async () => {
  const fr = await runCli(['clients', 'list'], { LANG: 'fr_CI.UTF-8', PORT: 'eighty' });
  assert.equal(fr.code, 2);
  assert.equal(fr.stderr, 'cauri: PORT : doit être un nombre entier (reçu « eighty »)\n');
  const en = await runCli(['clients', 'list'], { PORT: 'eighty' });
  assert.equal(en.code, 2);
  assert.equal(en.stderr, 'cauri: PORT: must be a whole number (got "eighty")\n');
});

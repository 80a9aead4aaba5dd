import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from './config.js';

test('defaults: sandbox on SQLite at 127.0.0.1:8080 with 1000 requests a minute', () => {
  const c = parseConfig({});
  assert.equal(c.mode, 'sandbox');
  assert.equal(c.livemode, false);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8080);
  assert.equal(c.publicUrl, 'http://127.0.0.1:8080');
  assert.equal(c.databaseUrl, null);
  assert.equal(c.rateLimitPerMinute, 1000);
  assert.equal(c.serviceName, 'cauri');
  assert.equal(c.seedSandboxData, true);
  assert.equal(c.pgPreparedStatements, true);
  assert.ok(Object.isFrozen(c));
});

test('PostgreSQL prepared statements can be turned off (a pooler that cannot keep them)', () => {
  assert.equal(parseConfig({ CAURI_PG_PREPARED_STATEMENTS: 'false' }).pgPreparedStatements, false);
  assert.equal(parseConfig({ CAURI_PG_PREPARED_STATEMENTS: 'true' }).pgPreparedStatements, true);
});

test('production needs a master key and a public URL, and uses the production rate', () => {
  assert.throws(() => parseConfig({ CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.example' }), (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_MASTER_KEY');
  const key = 'ab'.repeat(32);
  assert.throws(() => parseConfig({ CAURI_MODE: 'production', CAURI_MASTER_KEY: key }), (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_PUBLIC_URL');
  const c = parseConfig({ CAURI_MODE: 'production', CAURI_MASTER_KEY: key, CAURI_PUBLIC_URL: 'https://api.example/', CAURI_RATE_LIMIT_PRODUCTION: '20000' });
  assert.equal(c.livemode, true);
  assert.equal(c.publicUrl, 'https://api.example');
  assert.equal(c.rateLimitPerMinute, 20000);
  assert.equal(c.seedSandboxData, false);
});

test('private webhook receivers: allowed in sandbox unless configured otherwise, never in production', () => {
  assert.equal(parseConfig({}).webhooksAllowPrivate, true);
  assert.equal(parseConfig({ CAURI_WEBHOOKS_ALLOW_PRIVATE: 'false' }).webhooksAllowPrivate, false);
  const production = { CAURI_MODE: 'production', CAURI_MASTER_KEY: 'ab'.repeat(32), CAURI_PUBLIC_URL: 'https://api.example' };
  assert.equal(parseConfig({ ...production, CAURI_WEBHOOKS_ALLOW_PRIVATE: 'true' }).webhooksAllowPrivate, false);
});

test('plaintext FIX: allowed in sandbox, in production only with CAURI_FIX_ALLOW_PLAINTEXT=true', () => {
  assert.equal(parseConfig({}).fixPlaintextAllowed, true);
  const production = { CAURI_MODE: 'production', CAURI_MASTER_KEY: 'ab'.repeat(32), CAURI_PUBLIC_URL: 'https://api.example' };
  assert.equal(parseConfig(production).fixPlaintextAllowed, false);
  assert.equal(parseConfig({ ...production, CAURI_FIX_ALLOW_PLAINTEXT: 'true' }).fixPlaintextAllowed, true);
  assert.throws(() => parseConfig({ ...production, CAURI_FIX_ALLOW_PLAINTEXT: 'maybe' }), (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_FIX_ALLOW_PLAINTEXT');
});

test('every wrong value names its variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ CAURI_MODE: 'staging' }, 'CAURI_MODE'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ CAURI_MASTER_KEY: 'short' }, 'CAURI_MASTER_KEY'],
    [{ CAURI_PUBLIC_URL: 'not a url' }, 'CAURI_PUBLIC_URL'],
    [{ CAURI_RATE_LIMIT_SANDBOX: '0' }, 'CAURI_RATE_LIMIT_SANDBOX'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ CAURI_SEED: 'maybe' }, 'CAURI_SEED'],
    [{ CAURI_PG_PREPARED_STATEMENTS: 'sometimes' }, 'CAURI_PG_PREPARED_STATEMENTS'],
  ];
  for (const [env, variable] of cases) {
    assert.throws(() => parseConfig(env), (e: unknown) => e instanceof ConfigError && e.variable === variable && e.message.startsWith(variable), variable);
  }
});

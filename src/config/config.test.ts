import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, ensureDataDir, parseConfig } from './config.js';

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

test('production needs a master key, its public URL defaults to http://HOST:PORT, and it uses the production rate', () => {
  assert.throws(
    () => parseConfig({ CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.example' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_MASTER_KEY',
  );
  const key = 'ab'.repeat(32);
  const defaulted = parseConfig({ CAURI_MODE: 'production', CAURI_MASTER_KEY: key, HOST: '0.0.0.0', PORT: '9000' });
  assert.equal(defaulted.publicUrl, 'http://0.0.0.0:9000');
  assert.equal(defaulted.publicUrlDefaulted, true);
  assert.equal(defaulted.rateLimitPerMinute, 10000);
  const c = parseConfig({
    CAURI_MODE: 'production',
    CAURI_MASTER_KEY: key,
    CAURI_PUBLIC_URL: 'https://api.example/',
    CAURI_RATE_LIMIT_PRODUCTION: '20000',
  });
  assert.equal(c.livemode, true);
  assert.equal(c.publicUrl, 'https://api.example');
  assert.equal(c.publicUrlDefaulted, false);
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
  assert.throws(
    () => parseConfig({ ...production, CAURI_FIX_ALLOW_PLAINTEXT: 'maybe' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_FIX_ALLOW_PLAINTEXT',
  );
});

test('every wrong value names its variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ CAURI_MODE: 'staging' }, 'CAURI_MODE'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    // URLs the drivers could not read: refused at start, naming the variable, not a stack trace later.
    [{ REDIS_URL: 'redis://127.0.0.1:99999' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://bad host:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://127.0.0.1:abc' }, 'REDIS_URL'],
    [{ DATABASE_URL: 'postgres://127.0.0.1:99999/cauri' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://bad host:x/cauri' }, 'DATABASE_URL'],
    [{ CAURI_MASTER_KEY: 'short' }, 'CAURI_MASTER_KEY'],
    [{ CAURI_PUBLIC_URL: 'not a url' }, 'CAURI_PUBLIC_URL'],
    [{ CAURI_RATE_LIMIT_SANDBOX: '0' }, 'CAURI_RATE_LIMIT_SANDBOX'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ CAURI_SEED: 'maybe' }, 'CAURI_SEED'],
    [{ CAURI_PG_PREPARED_STATEMENTS: 'sometimes' }, 'CAURI_PG_PREPARED_STATEMENTS'],
    // Characters outside base64 would be skipped by Node's decoder, leaving some other 32 bytes.
    [{ CAURI_MASTER_KEY: `!!!!${'A'.repeat(43)}=` }, 'CAURI_MASTER_KEY'],
    [{ CAURI_MASTER_KEY: `${'A'.repeat(42)} A` }, 'CAURI_MASTER_KEY'],
    // A HOST the server could not bind is named as HOST, not as the public URL made from it.
    [{ HOST: '999.1.1.1' }, 'HOST'],
    [{ HOST: 'http://example.com' }, 'HOST'],
    [{ HOST: 'two words' }, 'HOST'],
    [{ HOST: 'a..b' }, 'HOST'],
    // The rate and the booleans of the other mode are checked too, not ignored until it is used.
    [{ CAURI_RATE_LIMIT_PRODUCTION: 'abc' }, 'CAURI_RATE_LIMIT_PRODUCTION'],
    [{ CAURI_WEBHOOKS_ALLOW_PRIVATE: 'maybe' }, 'CAURI_WEBHOOKS_ALLOW_PRIVATE'],
    [{ CAURI_FIX_ALLOW_PLAINTEXT: 'maybe' }, 'CAURI_FIX_ALLOW_PLAINTEXT'],
    [{ CAURI_MODE: 'production', CAURI_MASTER_KEY: 'ab'.repeat(32), CAURI_RATE_LIMIT_SANDBOX: '-1' }, 'CAURI_RATE_LIMIT_SANDBOX'],
    [
      { CAURI_MODE: 'production', CAURI_MASTER_KEY: 'ab'.repeat(32), CAURI_WEBHOOKS_ALLOW_PRIVATE: 'maybe' },
      'CAURI_WEBHOOKS_ALLOW_PRIVATE',
    ],
  ];
  for (const [env, variable] of cases) {
    assert.throws(
      () => parseConfig(env),
      (e: unknown) => e instanceof ConfigError && e.variable === variable && e.message.startsWith(variable),
      variable,
    );
  }
});

test('store URLs the drivers can read are taken as given; a wrong one is named without its password', () => {
  const ok = [
    { DATABASE_URL: 'postgres://cauri:p%40ss w@db.internal:5432/cauri?sslmode=require' },
    { DATABASE_URL: 'postgresql://cauri@/cauri?host=/run/postgresql' },
    { REDIS_URL: 'rediss://:secret@redis.internal:6380/2' },
    { REDIS_URL: 'redis://[::1]:6379' },
  ];
  for (const env of ok) {
    const config = parseConfig(env);
    assert.equal(config.databaseUrl ?? config.redisUrl, Object.values(env)[0]);
  }
  for (const env of [{ DATABASE_URL: 'postgres://u:hunter2@db:5432x/cauri' }, { REDIS_URL: 'redis://:hunter2@redis:70000' }]) {
    assert.throws(
      () => parseConfig(env),
      (e: unknown) => e instanceof ConfigError && /is not a valid URL/.test(e.message) && !e.message.includes('hunter2'),
    );
  }
});

test('limits on failed client authentications and the Redis timeout: defaults, overrides, bounds', () => {
  const c = parseConfig({});
  assert.equal(c.authFailuresPerAddress, 20);
  assert.equal(c.authFailuresPerClient, 10);
  assert.equal(c.redisTimeoutMs, 100);
  const set = parseConfig({ CAURI_AUTH_FAILURES_PER_ADDRESS: '50', CAURI_AUTH_FAILURES_PER_CLIENT: '5', CAURI_REDIS_TIMEOUT_MS: '25' });
  assert.deepEqual([set.authFailuresPerAddress, set.authFailuresPerClient, set.redisTimeoutMs], [50, 5, 25]);
  for (const variable of ['CAURI_AUTH_FAILURES_PER_ADDRESS', 'CAURI_AUTH_FAILURES_PER_CLIENT', 'CAURI_REDIS_TIMEOUT_MS']) {
    assert.throws(
      () => parseConfig({ [variable]: '0' }),
      (e: unknown) => e instanceof ConfigError && e.variable === variable,
    );
  }
});

test('CAURI_TRUST_PROXY: a boolean, or the proxies to trust as addresses, CIDR ranges or names', () => {
  assert.equal(parseConfig({}).trustProxy, false);
  assert.equal(parseConfig({ CAURI_TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(
    parseConfig({ CAURI_TRUST_PROXY: '10.0.0.0/8, 192.168.1.10,fd00::/8,loopback' }).trustProxy,
    '10.0.0.0/8,192.168.1.10,fd00::/8,loopback',
  );
  for (const wrong of ['proxy.internal', '10.0.0.0/33', '10.0.0.1/8/1', '10.0.0.1,']) {
    assert.throws(
      () => parseConfig({ CAURI_TRUST_PROXY: wrong }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_TRUST_PROXY',
      wrong,
    );
  }
});

test('HTTP time-outs and the connection cap: defaults, and a headers time-out longer than the request time-out is refused', () => {
  assert.deepEqual(parseConfig({}).http, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 72_000,
    maxConnections: 4096,
  });
  const set = parseConfig({
    CAURI_HTTP_HEADERS_TIMEOUT_MS: '500',
    CAURI_HTTP_REQUEST_TIMEOUT_MS: '500',
    CAURI_HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
    CAURI_HTTP_MAX_CONNECTIONS: '100',
  });
  assert.deepEqual(set.http, { headersTimeoutMs: 500, requestTimeoutMs: 500, keepAliveTimeoutMs: 5000, maxConnections: 100 });
  assert.throws(
    () => parseConfig({ CAURI_HTTP_HEADERS_TIMEOUT_MS: '40000' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_HTTP_HEADERS_TIMEOUT_MS',
  );
  assert.throws(
    () => parseConfig({ CAURI_HTTP_MAX_CONNECTIONS: '0' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_HTTP_MAX_CONNECTIONS',
  );
  assert.throws(
    () => parseConfig({ CAURI_HTTP_REQUEST_TIMEOUT_MS: '10s' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_HTTP_REQUEST_TIMEOUT_MS',
  );
});

test('CAURI_CORS_ORIGINS: none by default, *, or origins as browsers send them; anything more is refused', () => {
  assert.deepEqual(parseConfig({}).corsOrigins, []);
  assert.equal(parseConfig({ CAURI_CORS_ORIGINS: '*' }).corsOrigins, '*');
  assert.deepEqual(
    parseConfig({ CAURI_CORS_ORIGINS: 'https://App.Example.com, http://localhost:3000/,https://app.example.com:443' }).corsOrigins,
    ['https://app.example.com', 'http://localhost:3000'],
  );
  for (const wrong of [
    'app.example.com',
    'https://app.example.com/path',
    'https://app.example.com?x=1',
    'ftp://files.example.com',
    'https://user@app.example.com',
    '*,https://app.example.com',
    'https://app.example.com,',
  ]) {
    assert.throws(
      () => parseConfig({ CAURI_CORS_ORIGINS: wrong }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_CORS_ORIGINS',
      wrong,
    );
  }
});

test('shutdown: five seconds not ready before the listener closes, thirty for requests in flight, both bounded', () => {
  assert.deepEqual([parseConfig({}).shutdownDelaySeconds, parseConfig({}).shutdownTimeoutSeconds], [5, 30]);
  const set = parseConfig({ CAURI_SHUTDOWN_DELAY_SECONDS: '0', CAURI_SHUTDOWN_TIMEOUT_SECONDS: '120' });
  assert.deepEqual([set.shutdownDelaySeconds, set.shutdownTimeoutSeconds], [0, 120]);
  assert.throws(
    () => parseConfig({ CAURI_SHUTDOWN_TIMEOUT_SECONDS: '0' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_SHUTDOWN_TIMEOUT_SECONDS',
  );
  assert.throws(
    () => parseConfig({ CAURI_SHUTDOWN_DELAY_SECONDS: '5s' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_SHUTDOWN_DELAY_SECONDS',
  );
});

test('HOST takes addresses and host names; the master key takes hex, base64 and base64url', () => {
  for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'api.example.com', 'my-host', 'cauri_api'])
    assert.equal(parseConfig({ HOST: host }).host, host);
  assert.equal(parseConfig({ HOST: '::1' }).publicUrl, 'http://[::1]:8080');
  const key = Buffer.alloc(32, 0xfb);
  for (const text of [key.toString('hex'), key.toString('base64'), key.toString('base64url'), key.toString('base64').replace(/=$/, '')]) {
    assert.deepEqual(parseConfig({ CAURI_MASTER_KEY: text }).masterKey, key, text);
  }
});

test('CAURI_DATA_DIR that is a file, or under one, is refused naming the variable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-data-dir-'));
  try {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    for (const path of [file, join(file, 'below')]) {
      assert.throws(
        () => ensureDataDir(path),
        (e: unknown) => e instanceof ConfigError && e.variable === 'CAURI_DATA_DIR' && e.message.includes(path),
        path,
      );
    }
    ensureDataDir(join(dir, 'new', 'folder'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

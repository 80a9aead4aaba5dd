import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, spawnService } from '../support/process.js';

/**
 * What the command line answers to a wrong configuration or a wrong value: one line naming the
 * variable or the option, no stack trace, and the exit status docs/cli.md and docs/configuration.md
 * give (2 for the configuration, 1 for a command's value).
 */
function folder(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-misuse-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function oneLine(stderr: string, pattern: RegExp): void {
  assert.match(stderr, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
}

test('a data folder that is a file, a HOST that is no address, a master key with stray characters, a database that does not answer: exit 2, naming the variable', async (t) => {
  const dir = folder(t);
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  const cases: [Record<string, string>, RegExp][] = [
    [{ CAURI_DATA_DIR: file }, /^cauri: CAURI_DATA_DIR: is not a folder/],
    [{ CAURI_DATA_DIR: join(file, 'below') }, /^cauri: CAURI_DATA_DIR: is not a folder/],
    [{ CAURI_DATA_DIR: dir, HOST: '999.1.1.1' }, /^cauri: HOST: must be an IP address or a host name/],
    [{ CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: `!!!!${'A'.repeat(43)}=` }, /^cauri: CAURI_MASTER_KEY: must be 32 bytes/],
    [{ CAURI_DATA_DIR: dir, CAURI_RATE_LIMIT_PRODUCTION: 'lots' }, /^cauri: CAURI_RATE_LIMIT_PRODUCTION: must be a whole number/],
    // Nothing listens on port 1: a database that cannot be reached at start is named, password left out.
    [
      { CAURI_DATA_DIR: dir, DATABASE_URL: 'postgres://cauri:s3cret@127.0.0.1:1/cauri' },
      /^cauri: DATABASE_URL: cannot connect to 127\.0\.0\.1:1\/cauri: (?!.*s3cret)/,
    ],
  ];
  for (const [env, pattern] of cases) {
    for (const args of [['serve'], ['clients', 'list']]) {
      const { code, stderr } = await runCli(args, env);
      assert.equal(code, 2, `${args.join(' ')} ${JSON.stringify(env)}: ${stderr}`);
      oneLine(stderr, pattern);
    }
  }
});

test('production starts without CAURI_PUBLIC_URL, on http://HOST:PORT, and says so; a master key that does not open the database is named', async (t) => {
  const dir = folder(t);
  const env = { CAURI_DATA_DIR: dir, CAURI_MODE: 'production', CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_PUBLIC_URL: '' };
  const service = await spawnService(t, env);
  assert.match(service.output(), /"level":40,.*"msg":"CAURI_PUBLIC_URL is not set/);
  await service.stop();

  // Every process of a deployment needs the master key its database was created with.
  const { code, stderr } = await runCli(['keys', 'list'], { ...env, CAURI_MASTER_KEY: randomBytes(32).toString('hex') });
  assert.equal(code, 2, stderr);
  oneLine(stderr, /^cauri: CAURI_MASTER_KEY: does not open signing key key_/);
});

test('operator commands refuse an empty client name, an impossible date and an import file that is no array', async (t) => {
  const dir = folder(t);
  const env = { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' };

  for (const name of ['', '   ', 'x'.repeat(201)]) {
    const { code, stdout, stderr } = await runCli(['clients', 'create', '--name', name], env);
    assert.equal(code, 1, stdout);
    oneLine(stderr, /^cauri: --name must have 1 to 200 characters/);
  }
  assert.deepEqual(JSON.parse((await runCli(['clients', 'list', '--json'], env)).stdout), []);

  const date = await runCli(['fx', 'list', '--from', '2026-13-45'], env);
  assert.equal(date.code, 1);
  oneLine(date.stderr, /^cauri: --from must be a calendar day as YYYY-MM-DD \(got "2026-13-45"\)/);

  writeFileSync(join(dir, 'object.json'), '{ "name": "Example SGI" }');
  writeFileSync(join(dir, 'string.json'), '"BRVM"');
  for (const [command, file, pattern] of [
    ['partners', 'object.json', /^the file is refused: it must be a JSON array of rows; nothing was written\n$/],
    ['instruments', 'object.json', /^the file is refused: it must be a JSON array of rows; nothing was written\n$/],
    ['fx', 'string.json', /^the file is refused: it must be a JSON array of rows; nothing was written\n$/],
    [
      'calendars',
      'string.json',
      /^the file is refused: it must be one entry \(a JSON object\) or a JSON array of entries; nothing was written\n$/,
    ],
    [
      'fees',
      'string.json',
      /^the file is refused: it must be one entry \(a JSON object\) or a JSON array of entries; nothing was written\n$/,
    ],
  ] as const) {
    const refused = await runCli([command, 'import', join(dir, file)], env);
    assert.equal(refused.code, 1, `${command}: ${refused.stdout}${refused.stderr}`);
    assert.match(refused.stdout, pattern, command);
  }
});

test('a command line that cannot be read prints error: and the usage, exit 1', async () => {
  for (const [args, pattern] of [
    [['clients', 'rotate-secret'], /^error: missing required argument 'client_id'/],
    [['clients', 'list', '--bogus'], /^error: unknown option '--bogus'/],
    [['nosuch'], /^error: unknown command 'nosuch'/],
    [['migrate', 'extra'], /^error: too many arguments for 'migrate'/],
  ] as const) {
    const { code, stderr } = await runCli([...args], {});
    assert.equal(code, 1, args.join(' '));
    assert.match(stderr, pattern);
    assert.match(stderr, /\nUsage: cauri /);
  }
});

test('a reader that stops early (cauri ... | head -1) ends the command quietly, without a stack trace', async (t) => {
  const env = { CAURI_DATA_DIR: folder(t), CAURI_MASTER_KEY: randomBytes(32).toString('hex') };
  for (const args of [
    ['calendars', 'show', 'BRVM', '--year', '2026'],
    ['calendars', 'show', 'BRVM', '--year', '2026', '--json'],
  ]) {
    const run = await runCli(args, env, undefined, 'closed');
    assert.equal(run.stderr, '', `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.code, 0, args.join(' '));
  }
});

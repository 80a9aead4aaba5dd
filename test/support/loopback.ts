import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';

/** Set in the test process that runs inside the loopback-only network namespace. */
export const IN_LOOPBACK_NAMESPACE = process.env.CAURI_TEST_LOOPBACK_NAMESPACE === '1';

/**
 * TEST_DATABASE_URL as seen from a network namespace of its own: a PostgreSQL server on the host's
 * loopback is out of reach there, but its Unix socket (a file) is not.
 */
function databaseUrlInNamespace(url: string | undefined): string | undefined {
  if (url === undefined || url === '') return undefined;
  const parsed = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname))
    throw new Error(`TEST_DATABASE_URL must be a loopback server to be reached from the test's network namespace (got ${parsed.hostname})`);
  const port = parsed.port === '' ? '5432' : parsed.port;
  const dir = ['/var/run/postgresql', '/run/postgresql', '/tmp'].find((d) => existsSync(`${d}/.s.PGSQL.${port}`));
  if (dir === undefined)
    throw new Error(`no Unix socket of the PostgreSQL server on port ${port} (looked in /var/run/postgresql, /run/postgresql, /tmp)`);
  const user = parsed.username === '' ? '' : `${parsed.username}${parsed.password === '' ? '' : `:${parsed.password}`}@`;
  return `postgres://${user}${parsed.pathname}?host=${encodeURIComponent(dir)}&port=${port}`;
}

/**
 * Runs the test file `file` again inside a new network namespace whose only interface is loopback
 * (`unshare -n`, root), where the counterparties it starts and the service under test meet; passes
 * when every test there passes. Nothing started there can listen on a real interface.
 */
export async function runInLoopbackNamespace(t: TestContext, file: string): Promise<void> {
  const env: Record<string, string | undefined> = { ...process.env, CAURI_TEST_LOOPBACK_NAMESPACE: '1' };
  const databaseUrl = databaseUrlInNamespace(process.env.TEST_DATABASE_URL);
  if (databaseUrl === undefined) delete env.TEST_DATABASE_URL;
  else env.TEST_DATABASE_URL = databaseUrl;
  // Set by the test runner for the files it runs; the inner run reports to its own output instead.
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(
    'unshare',
    [
      '-n',
      '--',
      'sh',
      '-c',
      'ip link set lo up && exec "$0" "$@"',
      process.execPath,
      '--enable-source-maps',
      '--test',
      '--test-reporter=spec',
      file,
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      output += `\n${String(error)}`;
      resolve(null);
    });
    child.on('close', resolve);
  });
  for (const line of output.split('\n').filter((l) => /^\s*[✔✖]/.test(l))) t.diagnostic(line.trim());
  assert.equal(code, 0, `the tests in the loopback namespace failed (unshare -n needs root):\n${output}`);
}

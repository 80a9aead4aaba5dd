// Runs every compiled test file with Node's test runner. Node 20 does not expand globs given to
// --test, so the files are collected here. Extra arguments narrow the run to paths containing them.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = ['dist/src', 'dist/test', 'packages/verifier/dist', 'packages/sdk/dist'];
const filters = process.argv.slice(2);

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

// The files that take minutes (a package installed from its tarball, QuickFIX built and run, the docs
// run, processes started and killed) start first: run last, one of them would finish alone while the
// other slots stand idle.
const SLOW_FIRST = [
  'dist/test/packages/',
  'dist/test/fix/',
  'dist/test/docs/',
  'dist/test/cli/',
  'dist/test/browser/',
  'dist/test/http/faults',
  'dist/test/storage/',
];
const rank = (file) => {
  const i = SLOW_FIRST.findIndex((prefix) => file.startsWith(prefix));
  return i === -1 ? SLOW_FIRST.length : i;
};
const files = roots
  .flatMap((root) => collect(root, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// Test files give each PostgreSQL test a schema of its own (t_ + 12 hex digits) and leave it in place;
// they are removed here, before and after the run, when no test is migrating.
async function dropTestSchemas() {
  if (!process.env.TEST_DATABASE_URL) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query("select nspname from pg_namespace where nspname ~ '^t_[0-9a-f]{12}$'");
    for (const { nspname } of rows) await client.query(`drop schema if exists ${nspname} cascade`);
  } finally {
    await client.end();
  }
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
await dropTestSchemas();
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files.map((f) => relative('.', f))],
  { stdio: 'inherit' },
);
await dropTestSchemas();
process.exit(result.status ?? 1);

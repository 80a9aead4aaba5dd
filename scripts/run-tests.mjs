// Runs every compiled test file, a few processes at a time. Node 20 does not expand globs given to
// --test, so the files are collected here. Extra arguments narrow the run to paths containing them.
// The slow files run each in a process of its own; the others share a process with a few of their
// neighbours (TEST_ISOLATE=1 gives every file its own). Each process's report is printed whole when
// it ends (never interleaved with another's), and the run ends with the failed processes and the
// slowest.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

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
  // The SDK's files run it against a service, streams and restarts included (up to a minute each).
  'packages/sdk/dist/',
];
// Then the other files that start the service or open a database (the unit tests of src/ that use
// the test harness: up to half a minute each), then the other unit tests of src/ and the verifier (a
// second or less each, a few up to ten), which fill the lanes at the end.
const usesHarness = (file) => readFileSync(file, 'utf8').includes('support/harness.js');
const SHARED = SLOW_FIRST.length;
const rank = (file) => {
  const i = SLOW_FIRST.findIndex((prefix) => file.startsWith(prefix));
  if (i !== -1) return i;
  return SHARED + (file.startsWith('dist/test/') || usesHarness(file) ? 0 : 1);
};
const ranked = roots
  .flatMap((root) => collect(root, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .map((file) => {
    const r = rank(file);
    return { file, rank: r, size: r < SHARED ? 0 : statSync(file).size };
  })
  // Within the tiers that share processes, the largest files first (the size of a test file is a fair
  // guess at its time), so that the processes at the end of the run are short and no lane is left
  // alone with a long one.
  .sort((a, b) => a.rank - b.rank || b.size - a.size || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
if (ranked.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

// A process pays about a second of CPU to load the service's modules before its first test, as much
// as a quick file's tests take, and the run is bound by CPU. So the files after the slow ones share
// processes: six that start the service (a quarter to half a minute each), or sixteen unit tests (a
// second or less each). node:test runs the tests of a process one after another, in file order; the
// test files keep no state outside their tests (each test gets its own data folder and schema).
const isolate = process.env.TEST_ISOLATE === '1';
const GROUP = [6, 16];
const units = [];
for (const { file, rank: r } of ranked) {
  const size = isolate || r < SHARED ? 1 : GROUP[r - SHARED];
  const last = units.at(-1);
  if (last !== undefined && last.rank === r && last.files.length < size) last.files.push(file);
  else units.push({ rank: r, files: [file] });
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

const GROUP_SCRIPT = relative('.', new URL('run-test-group.mjs', import.meta.url).pathname);

/** Files in one process; its whole report, its exit and how long it took. */
function runUnit(files) {
  const started = Date.now();
  const paths = files.map((file) => relative('.', file));
  const args = paths.length === 1 ? paths : [GROUP_SCRIPT, ...paths];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--enable-source-maps', '--test-reporter=spec', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      const count = (name) => Number(output.match(new RegExp(`^ℹ ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
      resolve({
        files: paths,
        ok: code === 0,
        exit: signal ?? code,
        seconds: (Date.now() - started) / 1000,
        output,
        tests: count('tests'),
        pass: count('pass'),
        fail: count('fail'),
        skipped: count('skipped'),
      });
    });
  });
}

// Three files at a time: most files spend much of their time waiting (timers, child processes, the
// network), so two cores stay busy; but no more than two of the files that keep a core busy
// throughout (a browser, QuickFIX, the docs run, the tarball install) at once.
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? '3') || 3);
const HEAVY = ['dist/test/packages/', 'dist/test/fix/', 'dist/test/docs/pages', 'dist/test/browser/dashboard'];
const heavy = (unit) => unit.files.some((file) => HEAVY.some((prefix) => file.startsWith(prefix)));
const heavyAtOnce = Math.max(1, concurrency - 1);
let heavyRunning = 0;
const runStarted = Date.now();
await dropTestSchemas();
const results = [];
const pending = [...units];
const label = (result) => result.files.join(' + ');
async function lane() {
  while (pending.length > 0) {
    // The next process in order, passing over heavy ones while enough of them run.
    const index = heavyRunning >= heavyAtOnce ? pending.findIndex((u) => !heavy(u)) : 0;
    const unit = pending.splice(index === -1 ? 0 : index, 1)[0];
    const isHeavy = heavy(unit);
    if (isHeavy) heavyRunning++;
    const result = await runUnit(unit.files);
    if (isHeavy) heavyRunning--;
    results.push(result);
    process.stdout.write(
      `\n▶ ${label(result)} (${result.seconds.toFixed(1)} s, ${result.ok ? 'ok' : `FAILED, exit ${result.exit}`})\n${result.output}`,
    );
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, units.length) }, lane));
await dropTestSchemas();

const total = (key) => results.reduce((n, r) => n + r[key], 0);
const failed = results.filter((r) => !r.ok);
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 15);
process.stdout.write(
  `\n── ${ranked.length} files in ${results.length} processes, ${total('tests')} tests: ${total('pass')} passed, ${total('fail')} failed, ${total('skipped')} skipped, ` +
    `in ${((Date.now() - runStarted) / 1000).toFixed(0)} s (${concurrency} at a time)\n` +
    `slowest processes:\n${slowest.map((r) => `  ${r.seconds.toFixed(1).padStart(7)} s  ${label(r)}`).join('\n')}\n`,
);
if (failed.length > 0) {
  process.stdout.write(`failed processes:\n${failed.map((r) => `  ✖ ${label(r)} (exit ${r.exit})`).join('\n')}\n`);
  process.exit(1);
}

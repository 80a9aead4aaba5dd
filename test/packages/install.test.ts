import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { spawnCommandIn } from '../support/process.js';

const run = promisify(execFile);
// Compiled to dist/test/packages/: the repository root is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
type Json = Record<string, any>;

function folder(t: TestContext, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cauri-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function npm(args: string[], cwd: string, timeout = 300_000): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    timeout,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_ENV: '' },
  });
  return stdout;
}

/** `npm pack` of the three packages from the built checkout: the tarballs a release publishes. */
async function pack(t: TestContext): Promise<{ dir: string; files: Record<string, string[]>; tarballs: Record<string, string> }> {
  const dir = folder(t, 'pack');
  // --ignore-scripts: the checkout is already built by the test command; packing must not rebuild it.
  const report = JSON.parse(
    await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir, '--workspaces', '--include-workspace-root'], ROOT),
  ) as { name: string; filename: string; files: { path: string }[] }[];
  const files: Record<string, string[]> = {};
  const tarballs: Record<string, string> = {};
  for (const entry of report) {
    files[entry.name] = entry.files.map((f) => f.path).sort();
    tarballs[entry.name] = join(dir, entry.filename);
  }
  return { dir, files, tarballs };
}

function cleanProject(t: TestContext, name: string): string {
  const dir = folder(t, name);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `try-${name}`, private: true, type: 'module' }, null, 2)}\n`);
  return dir;
}

test('the packed tarballs hold what they declare and nothing of the development tree', async (t) => {
  const { files } = await pack(t);
  assert.deepEqual(Object.keys(files).sort(), ['@cauri/sdk', '@cauri/verifier', 'cauri']);
  for (const [name, list] of Object.entries(files)) {
    assert.ok(list.includes('LICENSE'), `${name}: LICENSE`);
    assert.ok(list.includes('README.md'), `${name}: README.md`);
    assert.ok(list.includes('package.json'), `${name}: package.json`);
    const stray = list.filter(
      (f) => /\.test\.|tsbuildinfo|(^|\/)test\/|(^|\/)bench\/|\.env$|(^|\/)data\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')),
    );
    assert.deepEqual(stray, [], `${name}: tests, sources or local files in the tarball`);
  }
  for (const needed of [
    'dist/src/cli/cauri.cjs',
    'dist/src/app.js',
    'calendars/BRVM.json',
    'fees/BRVM.json',
    'dashboard/public/index.html',
    'dashboard/dist/main.js',
  ]) {
    assert.ok(files.cauri!.includes(needed), `cauri: ${needed}`);
  }
  assert.ok(files['@cauri/verifier']!.includes('dist/cli.js'));
  assert.ok(files['@cauri/sdk']!.includes('dist/index.d.ts'));
  for (const manifest of ['package.json', 'packages/sdk/package.json', 'packages/verifier/package.json']) {
    const pkg = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as Json;
    assert.equal(pkg.private, undefined, `${manifest} is publishable`);
    assert.equal(pkg.license, 'Apache-2.0');
    assert.equal(pkg.engines.node, '>=20.19.0');
    assert.deepEqual(pkg.publishConfig, { access: 'public', provenance: true }, manifest);
  }
});

test('@cauri/verifier and @cauri/sdk install from their tarballs into a clean project and work there', async (t) => {
  const { tarballs } = await pack(t);
  const project = cleanProject(t, 'sdk');
  // Both tarballs at once: the SDK's dependency on the verifier is satisfied by the second tarball.
  // --engine-strict: a dependency that declares it needs a newer Node.js than this one fails the install.
  await npm(['install', '--offline', '--engine-strict', tarballs['@cauri/verifier']!, tarballs['@cauri/sdk']!], project, 60_000);

  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const res = await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'inv-packaged-1' });
  assert.equal(res.status, 201);
  writeFileSync(join(project, 'att.json'), await res.text());
  writeFileSync(join(project, 'keys.json'), await (await fetch(`${base}/.well-known/cauri`)).text());

  // The verifier's command, from the installed package.
  const verified = await run('npx', ['--no-install', 'cauri-verify', 'attestation', 'att.json', '--keys', 'keys.json'], { cwd: project });
  assert.match(verified.stdout, /^VALID attestation att_[0-9a-z]{26}$/m);

  // The SDK from plain ESM: a token, an API call, and the bundled offline verifier.
  writeFileSync(
    join(project, 'try.mjs'),
    `import { CauriClient, verifyAttestation } from '@cauri/sdk';
import { readFileSync } from 'node:fs';
const [baseUrl, clientId, clientSecret] = process.argv.slice(2);
const cauri = new CauriClient({ baseUrl, clientId, clientSecret });
const got = await cauri.attestations.get(JSON.parse(readFileSync('att.json', 'utf8')).id);
const result = verifyAttestation(got, JSON.parse(readFileSync('keys.json', 'utf8')));
console.log(JSON.stringify({ subject: got.subject_id, valid: result.valid }));
`,
  );
  const used = await run(process.execPath, ['try.mjs', base, api.clientId, api.clientSecret], { cwd: project });
  assert.deepEqual(JSON.parse(used.stdout), { subject: 'inv-packaged-1', valid: true });

  // The published types resolve for a TypeScript project (node16 resolution, strict).
  writeFileSync(
    join(project, 'try.ts'),
    `import { CauriClient, type Order, type Partner } from '@cauri/sdk';
const cauri: CauriClient = new CauriClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'cli_x', clientSecret: 'sk_test_x' });
export async function firstPartner(): Promise<Partner | undefined> {
  for await (const partner of cauri.partners.list({})) return partner;
  return undefined;
}
export const status = (order: Order): string => order.status;
`,
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'node16',
        moduleResolution: 'node16',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
      },
      files: ['try.ts'],
    }),
  );
  await run(process.execPath, [TSC, '-p', '.'], { cwd: project }).catch((error: { stdout: string }) => assert.fail(`tsc: ${error.stdout}`));
});

test('the cauri tarball installs into a clean folder and serves the sandbox from there', { timeout: 720_000 }, async (t) => {
  const { tarballs } = await pack(t);
  const project = cleanProject(t, 'service');
  // Its dependencies come from the registry (the npm cache first). better-sqlite3's install looks for a
  // prebuilt native module before it compiles one; it is given the one this checkout built, as a
  // download of the prebuilt binary would (compiling it again only tests the compiler, for minutes).
  const prebuilds = folder(t, 'prebuilds');
  const sqliteVersion = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as Json).version;
  const prebuilt = join(
    prebuilds,
    `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`,
  );
  await run('tar', ['-czf', prebuilt, '-C', join(ROOT, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);
  process.env.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  t.after(() => {
    delete process.env.npm_config_better_sqlite3_local_prebuilds;
  });
  // --engine-strict: every package the install brings must declare that it runs on this Node.js (the
  // oldest the package supports, on CI). Fastify's newest light-my-request needs a cookie parser that
  // declares Node.js 22, so the package pins the light-my-request its lock file has, and npm puts
  // that one in Fastify's reach.
  await npm(['install', '--prefer-offline', '--engine-strict', tarballs['@cauri/verifier']!, tarballs.cauri!], project, 600_000);

  const version = await run('npx', ['--no-install', 'cauri', '--version'], { cwd: project });
  assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Json).version);

  const data = folder(t, 'service-data');
  const service = await spawnCommandIn(
    t,
    join(project, 'node_modules', 'cauri', 'dist', 'src', 'cli', 'cauri.cjs'),
    'serve',
    { CAURI_DATA_DIR: data, HOST: '127.0.0.1', CAURI_MASTER_KEY: '', DATABASE_URL: '', REDIS_URL: '' },
    /"address":"(http:\/\/[^"]+)"/,
  );
  const base = service.base;
  assert.deepEqual(await (await fetch(`${base}/readyz`)).json(), { status: 'ready' });
  const exchanges = (await (await fetch(`${base}/v1/exchanges`)).json()) as Json;
  assert.deepEqual(
    exchanges.data.map((e: Json) => e.code),
    ['BRVM', 'BVMAC', 'GSE'],
  );
  const calendar = await fetch(`${base}/v1/exchanges/BRVM/calendar?from=2027-01-01&to=2027-01-05`);
  assert.equal(calendar.status, 200, 'the shipped calendars are in the package');
  const dashboard = await fetch(`${base}/dashboard/`);
  assert.equal(dashboard.status, 200);
  assert.match(await dashboard.text(), /<html/i);
  await service.stop();
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnService } from '../support/process.js';
import { fencedBlocks, runnableShellBlocks, shellScript } from './markdown.js';
import { freePort, runBash } from './shell.js';

// Compiled to dist/test/docs/: the repository root is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The walk-through in English, and in French (docs/fr/demarrage.md) under a French locale. */
const DOCS = [
  { doc: 'docs/getting-started.md', locale: { LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' } },
  { doc: 'docs/fr/demarrage.md', locale: { LANG: 'fr_FR.UTF-8', LC_ALL: '', LC_MESSAGES: '' } },
] as const;

/**
 * docs/getting-started.md and docs/fr/demarrage.md, each run as a reader would: its `sh` blocks (those not marked `no-test`), in
 * order, in one bash session at the repository root (so `npx cauri` is this checkout's command),
 * against a sandbox started as a separate process. The environment stands in for the `no-test`
 * blocks: `npm start` is the spawned service, `BASE` its address, `CAURI_DATA_DIR` the folder it and
 * `npx cauri` share (`./data` for a reader), `HOOK_PORT` a free port for the webhook receiver.
 */
for (const { doc: DOC, locale } of DOCS) test(`${DOC}: the five-minute walk-through runs as written`, { timeout: 90_000 }, async (t) => {
  const markdown = readFileSync(join(ROOT, DOC), 'utf8');
  const skipped = fencedBlocks(markdown).filter((b) => b.language === 'sh' && b.attributes.includes('no-test'));
  assert.ok(skipped.some((b) => b.code.includes('npm start')), 'starting the service is left to the test');
  const blocks = runnableShellBlocks(markdown);
  assert.ok(blocks.length >= 10, `expected the walk-through's blocks, found ${blocks.length}`);

  const dataDir = mkdtempSync(join(tmpdir(), 'cauri-getting-started-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  // Empty values override any .env at the root: this run is a fresh sandbox on SQLite, whatever the
  // developer's local configuration says.
  const deployment = {
    CAURI_MODE: 'sandbox',
    CAURI_DATA_DIR: dataDir,
    CAURI_MASTER_KEY: '',
    CAURI_PUBLIC_URL: '',
    DATABASE_URL: '',
    REDIS_URL: '',
    CAURI_WORKERS: 'all',
    CAURI_ANCHOR: 'sandbox',
    CAURI_SEED: 'true',
    // The simulated exchange keeps its hours, as for a reader: the walk-through's orders are on a test clock.
    CAURI_SANDBOX_MARKET_HOURS: 'exchange',
    HOST: '127.0.0.1',
  };
  const { base } = await spawnService(t, deployment);

  const result = await runBash(shellScript(blocks, DOC), {
    cwd: ROOT,
    // CAURI_CONFIG_DIR: `cauri listen` keeps its secret and position in a folder of this run, not the user's.
    env: { ...process.env, ...locale, ...deployment, BASE: base, HOOK_PORT: String(await freePort()), LOG_LEVEL: 'silent', CAURI_CONFIG_DIR: join(dataDir, 'config') },
    timeoutMs: 75_000,
  });
  const out = result.stdout;
  const context = `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${out}\n--- stderr\n${result.stderr}`;
  assert.equal(result.code, 0, context);

  // Step 1: the service answers.
  assert.ok(out.includes('{"status":"ready"}'), context);
  // Step 2: a client of the sandbox, and a 15-minute token.
  assert.match(out, /"client_secret": "sk_test_/, context);
  assert.match(out, /"token_type":"Bearer","expires_in":900/, context);
  // Step 3: a signed attestation that the offline verifier accepts, checked against the CRL.
  assert.match(out, /"level":"KYC2".*"key_id":"key_[0-9a-z]{26}","signature":"[A-Za-z0-9_-]{86}"/, context);
  assert.match(out, /^VALID attestation att_[0-9a-z]{26}$/m, context);
  assert.match(out, /^ {2}not revoked \(CRL #0\)$/m, context);
  // Step 4: the order is routed within the request; a replay is marked; the cap refuses 1,000 more.
  assert.match(out, /\{"id":"ord_[0-9a-z]{26}","status":"routed"/, context);
  assert.match(out, /^idempotent-replayed: true\r?$/m, context);
  assert.match(out, /"rule":"monthly_cap","value":1000/, context);
  // Step 5: signed deliveries, verified by the receiver, up to the execution; recorded as succeeded.
  assert.match(out, /^received order\.created evt_[0-9a-z]{26} created$/m, context);
  assert.match(out, /^received order\.routed evt_[0-9a-z]{26} routed$/m, context);
  assert.match(out, /^received order\.executed evt_[0-9a-z]{26} filled$/m, context);
  assert.match(out, /"event_type":"order\.executed".*"status":"succeeded".*"status_code":200/, context);
  // cauri listen: a sample event triggered without an endpoint, forwarded and verified with listen's own secret.
  const sample = /^webhook\.test (evt_[0-9a-z]{26}) stored: sent to the endpoints subscribed/m.exec(out)?.[1];
  assert.ok(sample !== undefined, context);
  assert.match(out, new RegExp(`^received webhook\\.test ${sample} ?$`, 'm'), context);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readDocument, runDocument } from './documents.js';
import { runnableShellBlocks } from './markdown.js';

/** The walk-through in English, and in French (docs/fr/demarrage.md) under a French locale. */
const DOCS = [
  {
    doc: 'docs/getting-started.md',
    locale: { LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' },
    // What `cauri trigger` prints, in the locale's language (it may follow, on the same line, a response printed without a newline).
    triggered: /webhook\.test (evt_[0-9a-z]{26}) stored: sent to the endpoints subscribed to webhook\.test/m,
  },
  {
    doc: 'docs/fr/demarrage.md',
    locale: { LANG: 'fr_FR.UTF-8', LC_ALL: '', LC_MESSAGES: '' },
    triggered: /webhook\.test (evt_[0-9a-z]{26}) enregistré : envoyé aux points de réception abonnés à webhook\.test/m,
  },
] as const;

/**
 * docs/getting-started.md and docs/fr/demarrage.md, each run as a reader would, against a fresh
 * sandbox (see runDocument). The blocks they leave out (`npm start`, the addresses of the service and
 * of the receiver) are listed with every other one in blocks.test.ts.
 */
for (const { doc: DOC, locale, triggered } of DOCS)
  test(`${DOC}: the five-minute walk-through runs as written`, { timeout: 150_000 }, async (t) => {
    assert.ok(runnableShellBlocks(readDocument(DOC)).length >= 10, "the walk-through's blocks");
    // The simulated exchange keeps its hours, as for a reader: the walk-through's orders are on a test clock.
    const result = await runDocument(t, DOC, {
      service: { CAURI_SANDBOX_MARKET_HOURS: 'exchange' },
      shell: locale,
      timeoutMs: 130_000,
      npx: 'real',
    });
    const context = result.context;
    const out = result.stdout;
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
    const sample = triggered.exec(out)?.[1];
    assert.ok(sample !== undefined, context);
    assert.match(out, new RegExp(`^received webhook\\.test ${sample} ?$`, 'm'), context);
  });

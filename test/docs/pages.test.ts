import { test } from 'node:test';
import assert from 'node:assert/strict';
import { documents, readDocument, runDocument } from './documents.js';
import { runnableShellBlocks } from './markdown.js';

/** Documents whose run has a test of its own, with assertions on what each step prints. */
const OWN_TESTS = new Set(['README.md', 'docs/getting-started.md', 'docs/fr/demarrage.md']);

/** What each page's run must print, beyond running to the end: one line of proof per page. */
const PROOF: Record<string, RegExp> = {
  'docs/accounts.md': /"account_number":"CI-0042-7781"/,
  'docs/cli.md': /cancelled \(requested\)/,
  'docs/dashboard.md': /"operator:read"|operator:read/,
  'docs/markets.md': /2028-12-25/,
  'docs/post-trade.md': /contract note of ord_[0-9a-z]{26}/,
  'docs/production.md': /copied \d+ pages/,
};

const pages = documents().filter((doc) => !OWN_TESTS.has(doc) && runnableShellBlocks(readDocument(doc)).length > 0);

test('every page with shell blocks to run has its proof line', () => {
  assert.deepEqual(pages, Object.keys(PROOF).sort());
});

/**
 * Each page of docs/ runs as written against a sandbox of its own (see runDocument): every block
 * ends with status 0 (the blocks run under `set -euo pipefail`), and no answer of the API printed on
 * the way is an error body, which `curl -s` would not notice.
 */
for (const doc of pages) {
  // Generous limits: a page such as cli.md runs some forty commands, each a Node.js process.
  test(`${doc}: its shell blocks run as written`, { timeout: 900_000 }, async (t) => {
    const { code, stdout, context } = await runDocument(t, doc, { timeoutMs: 840_000 });
    assert.equal(code, 0, context);
    assert.doesNotMatch(stdout, /\{"code":"[a-z_]+","message":/, context);
    assert.match(stdout, PROOF[doc] as RegExp, context);
  });
}

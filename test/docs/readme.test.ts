import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDocument } from './documents.js';

/**
 * README.md's first call, pasted as written, against a fresh sandbox (see runDocument). The blocks it
 * leaves out, starting the service, running the tests and the service's address, are listed with
 * every other one in blocks.test.ts.
 */
test('README.md: the first call runs as written', { timeout: 120_000 }, async (t) => {
  const { code, stdout: out, context } = await runDocument(t, 'README.md', { timeoutMs: 100_000, npx: 'real' });
  assert.equal(code, 0, context);
  // The directory page, with its cursor header, and an attestation issued with the token.
  assert.match(out, /"token_endpoint":"http:\/\/[^"]+\/v1\/auth\/token"/, context);
  assert.match(out, /HTTP\/1\.1 200 OK\r?\n/, context);
  assert.match(out, /^x-cursor-next: /im, context);
  assert.match(out, /"data":\[\{"id":"sgi_[0-9a-z]{26}"/, context);
  assert.match(out, /\{"id":"att_[0-9a-z]{26}","version":"1.0","subject_id":"inv-0001","level":"KYC1"/, context);
});

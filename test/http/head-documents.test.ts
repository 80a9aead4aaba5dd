import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { rawRequest } from '../support/raw-http.js';
import { sandboxPartner } from '../support/order-context.js';

// Every public document, each read with HEAD as a cache, a link checker or `curl -I` reads it.
const PUBLIC_DOCUMENTS = [
  '/.well-known/cauri',
  '/.well-known/jwks.json',
  '/.well-known/oauth-authorization-server',
  '/v1/kyc/crl',
  '/v1/openapi.json',
  '/v1/sgi/partners?limit=1',
  `/v1/sgi/partners/${sandboxPartner('baobab')}`,
  '/v1/exchanges',
  '/v1/exchanges/BRVM/calendar?from=2026-12-01&to=2026-12-31',
  '/v1/instruments?limit=5',
  '/v1/instruments/KOLA.BRVM',
];

for (const database of DATABASES) {
  test(`HEAD of a public document: the GET's ETag, Cache-Control and Link, and 304 on If-None-Match, on ${database.name}`, async (t) => {
    const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
    const base = await listen(runtime);
    for (const path of PUBLIC_DOCUMENTS) {
      for (const encoding of ['identity', 'br']) {
        const get = await rawRequest('GET', `${base}${path}`, { 'accept-encoding': encoding });
        const head = await rawRequest('HEAD', `${base}${path}`, { 'accept-encoding': encoding });
        assert.equal(get.status, 200, path);
        assert.equal(head.status, 200, `HEAD ${path}`);
        assert.equal(head.body.length, 0, `HEAD ${path}: no body`);
        const etag = get.headers.etag as string;
        assert.match(etag, /^"[A-Za-z0-9_-]+"$/, `${path}: a strong tag`);
        // HEAD is never compressed: its tag is the one of the identity body, which either form matches.
        assert.equal(String(head.headers.etag).replace(/-br"$/, '"'), etag.replace(/-br"$/, '"'), `HEAD ${path} (${encoding}): the ETag`);
        assert.equal(head.headers['cache-control'], get.headers['cache-control'], `HEAD ${path}: Cache-Control`);
        assert.equal(head.headers.link, get.headers.link, `HEAD ${path}: Link`);
        assert.equal(head.headers['content-type'], get.headers['content-type'], `HEAD ${path}: Content-Type`);

        for (const ifNoneMatch of [etag, `W/${etag}`, '*']) {
          const again = await rawRequest('HEAD', `${base}${path}`, { 'if-none-match': ifNoneMatch, 'accept-encoding': encoding });
          assert.equal(again.status, 304, `HEAD ${path} with If-None-Match ${ifNoneMatch}`);
          assert.equal(again.body.length, 0);
          // A HEAD may give a Content-Length only when it is what the same request with GET gets
          // (RFC 9110 §8.6): a 304 has no content.
          const length = again.headers['content-length'];
          if (length !== undefined) assert.equal(length, '0', `HEAD ${path} 304: Content-Length`);
          assert.equal(String(again.headers.etag).replace(/-br"$/, '"'), etag.replace(/-br"$/, '"'));
          assert.equal(again.headers['access-control-allow-origin'], '*');
        }
        assert.equal(
          (await rawRequest('HEAD', `${base}${path}`, { 'if-none-match': '"stale"' })).status,
          200,
          `HEAD ${path} with a stale tag`,
        );
      }
    }
  });
}

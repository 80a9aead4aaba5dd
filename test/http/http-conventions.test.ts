import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ALLOWED_HEADERS, EXPOSED_HEADERS, PREFLIGHT_MAX_AGE } from '../../src/http/cors.js';
import { strongEtag } from '../../src/http/etag.js';
import { apiClient, KYC2_REQUEST } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { rawRequest } from '../support/raw-http.js';
import { sandboxPartner } from '../support/order-context.js';

type Json = Record<string, any>;

const PUBLIC_DOCUMENTS = [
  '/.well-known/cauri',
  '/.well-known/jwks.json',
  '/v1/kyc/crl',
  '/v1/openapi.json',
  '/v1/sgi/partners',
  `/v1/sgi/partners/${sandboxPartner('baobab')}`,
  '/v1/exchanges',
  '/v1/exchanges/BRVM/calendar?from=2026-12-01&to=2026-12-31',
  '/v1/instruments?limit=5',
  '/v1/instruments/KOLA.BRVM',
];

/** The Cache-Control docs/http.md gives each public document, by the words its table names it with. */
function documentedCacheControl(path: string): string | undefined {
  const doc = readFileSync(new URL('../../../docs/http.md', import.meta.url), 'utf8');
  const rows = doc.slice(doc.indexOf('| Documents | `Cache-Control` |')).split('\n').slice(2);
  const words: [RegExp, string][] = [
    [/^\/\.well-known\/cauri/, 'issuer key document'],
    [/^\/\.well-known\/jwks/, 'access-token keys'],
    [/^\/v1\/kyc\/crl/, 'revocation list'],
    [/^\/v1\/openapi/, 'OpenAPI description'],
    [/^\/v1\/sgi\/partners/, 'partner directory'],
    [/^\/v1\/instruments/, 'instrument catalogue'],
    [/^\/v1\/exchanges\/[A-Z]+\/calendar/, 'calendars'],
    [/^\/v1\/exchanges/, 'the exchanges'],
  ];
  const name = words.find(([pattern]) => pattern.test(path))?.[1];
  const row = rows.find((line) => name !== undefined && line.startsWith('| ') && line.includes(name));
  assert.ok(row !== undefined, `docs/http.md gives the Cache-Control of ${path}`);
  return /\| `([^`]+)` \|$/.exec(row)?.[1];
}

test('public documents: a strong ETag of the body, 304 on If-None-Match, a new tag when the document changes', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  for (const path of PUBLIC_DOCUMENTS) {
    const first = await rawRequest('GET', `${base}${path}`);
    assert.equal(first.status, 200, path);
    assert.equal(first.headers['cache-control'], documentedCacheControl(path), `${path}: Cache-Control`);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/, `${path}: a strong tag`);
    if (path !== '/v1/kyc/crl') assert.equal(etag, strongEtag(first.body), `${path}: the tag of the body sent`);
    // (The revocation list answers its own 304s, by its own tag, with the same comparison.)
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*', ' * ']) {
      const again = await rawRequest('GET', `${base}${path}`, { 'if-none-match': ifNoneMatch });
      assert.equal(again.status, 304, `${path} with ${ifNoneMatch}`);
      assert.equal(again.body.length, 0);
      assert.equal(again.headers.etag, etag);
      assert.equal(again.headers['access-control-allow-origin'], '*');
    }
    assert.equal((await rawRequest('GET', `${base}${path}`, { 'if-none-match': '"stale"' })).status, 200, path);
  }

  // The access-token keys change with a rotation: the old tag no longer matches.
  const before = await rawRequest('GET', `${base}/.well-known/jwks.json`);
  await runtime.services.keys.rotate('token');
  const after = await rawRequest('GET', `${base}/.well-known/jwks.json`, { 'if-none-match': before.headers.etag as string });
  assert.equal(after.status, 200);
  assert.notEqual(after.headers.etag, before.headers.etag);

  // Authenticated reads are not tagged.
  const api = await apiClient(runtime, base);
  assert.equal((await api.call('GET', '/v1/orders')).headers.get('etag'), null);
});

test('responses are compressed (br, gzip) when asked and large enough; event streams are not', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  const plain = await rawRequest('GET', `${base}/v1/openapi.json`);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.body.length > 100_000, `the description is ${plain.body.length} bytes`);

  const br = await rawRequest('GET', `${base}/v1/openapi.json`, { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.match(String(br.headers.vary), /accept-encoding/i);
  assert.ok(br.body.length < plain.body.length / 5, `${br.body.length} compressed bytes`);
  assert.deepEqual(brotliDecompressSync(br.body), plain.body);
  // A compressed representation has a tag of its own, and either revalidates.
  assert.equal(br.headers.etag, `${(plain.headers.etag as string).slice(0, -1)}-br"`);
  assert.equal(
    (await rawRequest('GET', `${base}/v1/openapi.json`, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string })).status,
    304,
  );
  assert.equal((await rawRequest('GET', `${base}/v1/openapi.json`, { 'if-none-match': br.headers.etag as string })).status, 304);

  const gzip = await rawRequest('GET', `${base}/v1/openapi.json`, { 'accept-encoding': 'gzip' });
  assert.equal(gzip.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gzip.body), plain.body);
  // docs/http.md quotes these sizes: they stay within a fifth of what is sent.
  const quoted = /some (\d+) KB, travels as about (\d+) KB with Brotli and (\d+) KB with gzip/.exec(
    readFileSync(new URL('../../../docs/http.md', import.meta.url), 'utf8').replace(/\s+/g, ' '),
  );
  assert.ok(quoted !== null, 'docs/http.md quotes the sizes of the OpenAPI description');
  for (const [kb, bytes] of [quoted[1], quoted[2], quoted[3]].map((n, i) => [Number(n), [plain, br, gzip][i]!.body.length] as const)) {
    assert.ok(Math.abs(kb * 1000 - bytes) <= bytes / 5, `docs/http.md says ${kb} KB, ${bytes} bytes are sent`);
  }
  assert.equal(
    (await rawRequest('GET', `${base}/v1/openapi.json`, { 'accept-encoding': 'deflate' })).headers['content-encoding'],
    undefined,
    'only br and gzip',
  );

  // Below 1 KiB a response goes as it is.
  const small = await rawRequest('GET', `${base}/healthz`, { 'accept-encoding': 'br, gzip' });
  assert.equal(small.headers['content-encoding'], undefined);
  // The dashboard's files too.
  const script = await rawRequest('GET', `${base}/dashboard/main.js`, { 'accept-encoding': 'gzip' });
  assert.equal(script.headers['content-encoding'], 'gzip');
  assert.match(gunzipSync(script.body).toString(), /hashchange/);
  assert.equal(script.headers['content-security-policy'] !== undefined, true);

  // The event stream is written as it happens, never buffered by a compressor.
  const api = await apiClient(runtime, base, ['webhooks:manage']);
  const stream = await new Promise<{ headers: Record<string, string | string[] | undefined>; first: string }>((resolve, reject) => {
    const req = httpRequest(
      `${base}/v1/events/stream`,
      { headers: { authorization: `Bearer ${api.token}`, 'accept-encoding': 'br, gzip' } },
      (res) => {
        res.once('data', (chunk: Buffer) => {
          resolve({ headers: res.headers, first: chunk.toString('utf8') });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.equal(stream.headers['content-encoding'], undefined);
  assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
  assert.equal(stream.first, ': connected\n\n');
});

test('paged listings: RFC 8288 Link headers beside the cursor headers, each link the next page', async (t) => {
  for (const database of DATABASES) {
    await t.test(database.name, async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none', CAURI_PUBLIC_URL: 'https://api.example.com' });
      const base = await listen(runtime);
      const follow = (link: string | null, rel: string) => {
        const match = new RegExp(`<([^>]+)>; rel="${rel}"`).exec(link ?? '');
        if (match === null) return null;
        const url = new URL(match[1] as string);
        assert.equal(url.origin, 'https://api.example.com', 'under the public base URL');
        return `${url.pathname}${url.search}`;
      };

      // Public: the instruments, three at a time, filtered.
      const first = await fetch(`${base}/v1/instruments?exchange=BRVM&limit=3`);
      const next = follow(first.headers.get('link'), 'next');
      assert.ok(next !== null, String(first.headers.get('link')));
      const params = new URL(`https://x${next}`).searchParams;
      assert.equal(params.get('exchange'), 'BRVM', 'the filters are kept');
      assert.equal(params.get('limit'), '3');
      assert.equal(params.get('cursor'), first.headers.get('x-cursor-next'));
      const second = await fetch(`${base}${next}`);
      assert.equal(second.status, 200);
      const [a, b] = [(await first.json()) as Json, (await second.json()) as Json];
      assert.ok(a.data.at(-1).code < b.data[0].code, 'the link is the next page');
      // Last page: no next link.
      let link = first.headers.get('link');
      let page = 0;
      while (follow(link, 'next') !== null && page < 100) {
        const res = await fetch(`${base}${follow(link, 'next')}`);
        link = res.headers.get('link');
        if (res.headers.get('x-cursor-next') === '') assert.equal(follow(link, 'next'), null);
        page++;
      }
      assert.ok(page > 1);

      // Authenticated, with a previous page: orders, newest first.
      const api = await apiClient(runtime, base);
      const att = (await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as Json;
      for (let i = 0; i < 3; i++) {
        const res = await api.post('/v1/orders', {
          rcpt_to: sandboxPartner('baobab'),
          kyc_attestation_id: att.id,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 1,
          limit_price_cents: 1_433_750,
        });
        assert.equal(res.status, 201, await res.text());
      }
      const orders = await api.call('GET', '/v1/orders?limit=2');
      assert.equal(follow(orders.headers.get('link'), 'prev'), null, 'the first page has no previous one');
      const older = await api.call('GET', follow(orders.headers.get('link'), 'next') as string);
      assert.equal(((await older.json()) as Json).data.length, 1);
      const back = follow(older.headers.get('link'), 'prev');
      assert.ok(back !== null);
      assert.equal(new URL(`https://x${back}`).searchParams.get('cursor'), older.headers.get('x-cursor-prev'));
      assert.equal(((await (await api.call('GET', back)).json()) as Json).data.length, 2);
      // The events listing has them too.
      assert.match(String((await api.call('GET', '/v1/events?limit=1')).headers.get('link')), /rel="next"/);
    });
  }
});

test('CORS: public documents for any origin; the API for the configured origins only; preflights answered', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_CORS_ORIGINS: 'https://app.example.com' });
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const preflight = (path: string, origin: string, method: string, headers = 'authorization') =>
    fetch(`${base}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  // A public document: any origin, with or without Origin (a cache may serve either).
  for (const headers of [{}, { origin: 'https://elsewhere.example' }] as Record<string, string>[]) {
    const res = await fetch(`${base}/v1/sgi/partners`, { headers });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-expose-headers'), EXPOSED_HEADERS);
  }
  const documentPreflight = await preflight('/v1/sgi/partners/sgi_x', 'https://elsewhere.example', 'GET', 'if-none-match');
  assert.equal(documentPreflight.status, 204);
  assert.equal(documentPreflight.headers.get('access-control-allow-origin'), '*');
  assert.equal(documentPreflight.headers.get('access-control-allow-methods'), 'GET, HEAD');
  assert.equal((await preflight('/v1/sgi/partners', 'https://elsewhere.example', 'POST')).status, 403);

  // The API: the configured origin gets its own origin back, varied on Origin; others get nothing.
  const allowed = await api.call('GET', '/v1/orders', undefined, { origin: 'https://app.example.com' });
  assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example.com');
  assert.equal(allowed.headers.get('access-control-expose-headers'), EXPOSED_HEADERS);
  assert.match(String(allowed.headers.get('vary')), /Origin/);
  assert.equal(allowed.headers.get('access-control-allow-credentials'), null, 'bearer tokens, never cookies');
  const refused = await api.call('GET', '/v1/orders', undefined, { origin: 'https://evil.example' });
  assert.equal(refused.status, 200, 'a server-side caller is not affected');
  assert.equal(refused.headers.get('access-control-allow-origin'), null);
  // Errors carry the headers too, so that a page can read them.
  const unauthorized = await fetch(`${base}/v1/orders`, { headers: { origin: 'https://app.example.com' } });
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.headers.get('access-control-allow-origin'), 'https://app.example.com');
  // So do the API's paths that no route serves: a mistyped path, a method the path does not take.
  for (const [method, path] of [
    ['GET', '/v1/ordres'],
    ['PUT', '/v1/orders'],
    ['DELETE', '/.well-known/nothing'],
  ] as const) {
    for (const origin of ['https://app.example.com', 'https://evil.example']) {
      const unrouted = await fetch(`${base}${path}`, { method, headers: { origin } });
      assert.equal(unrouted.status, 404, `${method} ${path}`);
      assert.equal(((await unrouted.json()) as Json).code, 'not_found');
      const expected = origin === 'https://app.example.com' ? origin : null;
      assert.equal(unrouted.headers.get('access-control-allow-origin'), expected, `${method} ${path} from ${origin}`);
      assert.match(String(unrouted.headers.get('vary')), /Origin/);
    }
  }
  const outside = await fetch(`${base}/nowhere`, { headers: { origin: 'https://app.example.com' } });
  assert.equal(outside.status, 404);
  assert.equal(outside.headers.get('access-control-allow-origin'), null, 'outside the API, no policy');

  const apiPreflight = await preflight('/v1/orders', 'https://app.example.com', 'POST', 'authorization,content-type,idempotency-key');
  assert.equal(apiPreflight.status, 204);
  assert.equal(apiPreflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
  assert.equal(apiPreflight.headers.get('access-control-allow-headers'), ALLOWED_HEADERS);
  assert.equal(apiPreflight.headers.get('access-control-max-age'), String(PREFLIGHT_MAX_AGE));
  assert.ok(apiPreflight.headers.get('x-request-id')?.startsWith('req_'));
  // Not counted, but it reports where the address stands, like every API response.
  assert.equal(apiPreflight.headers.get('x-ratelimit-limit'), String(runtime.config.rateLimitPerMinute));
  const again = await preflight('/v1/orders', 'https://app.example.com', 'POST');
  if (again.headers.get('x-ratelimit-reset') === apiPreflight.headers.get('x-ratelimit-reset'))
    assert.equal(again.headers.get('x-ratelimit-remaining'), apiPreflight.headers.get('x-ratelimit-remaining'), 'not counted');
  const refusedPreflight = await preflight('/v1/orders', 'https://evil.example', 'POST');
  assert.equal(refusedPreflight.status, 403);
  const body = (await refusedPreflight.json()) as Json;
  assert.equal(body.code, 'forbidden');
  assert.equal(body.request_id, refusedPreflight.headers.get('x-request-id'));
  assert.equal(refusedPreflight.headers.get('access-control-allow-origin'), null);
  // An OPTIONS that is no preflight is still an unknown route.
  assert.equal((await fetch(`${base}/v1/orders`, { method: 'OPTIONS' })).status, 404);
});

test('CORS: without CAURI_CORS_ORIGINS the API answers no origin; with * every origin', async (t) => {
  const closed = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const closedBase = await listen(closed);
  const token = await fetch(`${closedBase}/v1/auth/token`, {
    method: 'POST',
    headers: { origin: 'https://app.example.com', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(token.headers.get('access-control-allow-origin'), null);
  assert.equal(token.headers.get('vary'), null);
  assert.equal(
    (
      await fetch(`${closedBase}/v1/orders`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      })
    ).status,
    403,
  );
  assert.equal((await fetch(`${closedBase}/.well-known/jwks.json`)).headers.get('access-control-allow-origin'), '*');

  const open = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_CORS_ORIGINS: '*' });
  const openBase = await listen(open);
  const any = await fetch(`${openBase}/v1/auth/token`, {
    method: 'POST',
    headers: { origin: 'https://anywhere.example', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(any.headers.get('access-control-allow-origin'), '*');
  const anyPreflight = await fetch(`${openBase}/v1/orders`, {
    method: 'OPTIONS',
    headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'DELETE' },
  });
  assert.equal(anyPreflight.status, 204);
  assert.equal(anyPreflight.headers.get('access-control-allow-origin'), '*');
  const unrouted = await fetch(`${openBase}/v1/ordres`, { headers: { origin: 'https://anywhere.example' } });
  assert.equal(unrouted.status, 404);
  assert.equal(unrouted.headers.get('access-control-allow-origin'), '*');
  assert.equal(
    (await fetch(`${closedBase}/v1/ordres`, { headers: { origin: 'https://app.example.com' } })).headers.get('access-control-allow-origin'),
    null,
  );
});

test("a caller's X-Request-Id is kept beside the service's own, which every response carries", async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  for (const sent of ['gw-17', 'not valid!', 'x'.repeat(200)]) {
    const res = await fetch(`${base}/v1/orders`, { headers: { 'x-request-id': sent } });
    const id = res.headers.get('x-request-id');
    assert.match(String(id), /^req_[0-9a-z]{26}$/, 'the response names the service id, whatever was sent');
    assert.equal(((await res.json()) as Json).request_id, id);
  }
});

for (const database of DATABASES) {
  test(`every API route refuses a query parameter it does not take: 422 naming it, on ${database.name}`, async (t) => {
    const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
    const base = await listen(runtime);
    const api = await apiClient(runtime, base, [
      'kyc:read',
      'kyc:write',
      'orders:read',
      'orders:write',
      'audit:read',
      'webhooks:manage',
      'operator:read',
    ]);
    const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Json;
    // Path parameters that pass their own checks, so that the query string is what is refused.
    const values: Record<string, string> = {
      date: '2026-01-02',
      code: 'BRVM',
      subject_id: 'subject-1',
      partner_id: sandboxPartner('baobab'),
    };
    let checked = 0;
    let wellKnown = 0;
    for (const [template, operations] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
      if (template.startsWith('/.well-known/')) {
        // Public documents ignore query strings (cache-busting parameters), as web documents do.
        const res = await fetch(`${base}${template}?unknown_param=1`);
        assert.equal(res.status, 200, `GET ${template}`);
        wellKnown++;
        continue;
      }
      if (!template.startsWith('/v1/')) continue;
      for (const method of Object.keys(operations).filter((m) => m === 'get' || m === 'delete')) {
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'x');
        const res = await api.call(method.toUpperCase(), `${path}?unknown_param=1`);
        const where = `${method.toUpperCase()} ${template}`;
        assert.equal(res.status, 422, where);
        const body = (await res.json()) as Json;
        assert.equal(body.code, 'validation_error', where);
        assert.equal(body.request_id, res.headers.get('x-request-id'), where);
        assert.ok(
          body.details.some((d: Json) => d.field === 'unknown_param' && d.rule === 'additionalProperties' && d.value === '1'),
          `${where}: ${JSON.stringify(body.details)}`,
        );
        assert.ok(operations[method]?.responses['422'], `${where}: the document lists the 422`);
        checked++;
      }
    }
    assert.ok(checked >= 33, `${checked} operations checked`);
    assert.ok(wellKnown >= 2, `${wellKnown} public documents checked`);
    // The token endpoint ignores request parameters it does not know, as OAuth 2.0 requires (RFC 6749 §3.2).
    const token = await fetch(`${base}/v1/auth/token?unknown_param=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret }),
    });
    assert.equal(token.status, 200, await token.text());
  });
}

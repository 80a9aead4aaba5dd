import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KYC2_REQUEST } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { launchChromium } from './chromium.js';

type Json = Record<string, any>;

/** A web app of another origin: one empty page on a loopback port of its own. */
async function webApp(t: TestContext): Promise<string> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Broker app</title><h1>Broker app</h1>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * What the page's own script does with the API, run in the page (its origin): a public document and
 * its revalidation, then the token exchange, an authenticated listing and a mutating POST, each a
 * request that needs a preflight. Every failure is caught and reported, as a browser app would see it.
 */
const SCRIPT = (api: string, clientId: string, secret: string, attestation: unknown) => `(async () => {
  const api = ${JSON.stringify(api)};
  const out = {};
  const attempt = async (name, work) => {
    try { out[name] = await work(); } catch (error) { out[name] = { failed: String(error) }; }
  };
  await attempt('keys', async () => {
    const res = await fetch(api + '/.well-known/jwks.json', { cache: 'no-store' });
    const body = await res.json();
    const again = await fetch(api + '/.well-known/jwks.json', { cache: 'no-store', headers: { 'if-none-match': res.headers.get('etag') } });
    return { status: res.status, keys: body.keys.length, etag: res.headers.get('etag'), revalidated: again.status };
  });
  await attempt('token', async () => {
    const res = await fetch(api + '/v1/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: ${JSON.stringify(clientId)}, client_secret: ${JSON.stringify(secret)} }) });
    const body = await res.json();
    out.accessToken = body.access_token;
    return { status: res.status, type: body.token_type };
  });
  if (typeof out.accessToken === 'string') {
    const auth = { authorization: 'Bearer ' + out.accessToken };
    await attempt('orders', async () => {
      const res = await fetch(api + '/v1/orders?limit=1', { headers: auth });
      return { status: res.status, requestId: res.headers.get('x-request-id'), cursor: res.headers.get('x-cursor-next'), remaining: res.headers.get('x-ratelimit-remaining') };
    });
    await attempt('attestation', async () => {
      const res = await fetch(api + '/v1/kyc/attestations', { method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID(), 'x-request-id': 'browser-1' },
        body: JSON.stringify(${JSON.stringify(attestation)}) });
      const body = await res.json();
      return { status: res.status, level: body.level };
    });
  }
  delete out.accessToken;
  return out;
})()`;

test('a browser app on another origin reads the public documents, and calls the API only from an allowed origin', async (t) => {
  const allowedApp = await webApp(t);
  const otherApp = await webApp(t);
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_CORS_ORIGINS: allowedApp });
  const api = await listen(runtime);
  assert.notEqual(new URL(api).origin, allowedApp, 'the API is another origin than the app');
  const client = await runtime.services.clients.create('Browser app', ['kyc:write', 'orders:read']);
  const preflights: string[] = [];
  runtime.app.server.on('request', (req: { method?: string; url?: string; headers: Record<string, unknown> }) => {
    if (req.method === 'OPTIONS')
      preflights.push(`${String(req.headers.origin)} ${String(req.headers['access-control-request-method'])} ${req.url}`);
  });

  const context = await launchChromium(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  const attestation = { ...KYC2_REQUEST, subject_id: 'browser-subject' };

  await page.goto(`${allowedApp}/`);
  const allowed = (await page.evaluate(SCRIPT(api, client.client_id, client.client_secret, attestation))) as Json;
  assert.deepEqual(allowed.keys.status, 200);
  assert.ok(allowed.keys.keys >= 1);
  assert.match(allowed.keys.etag, /^"/, 'ETag is readable from the page');
  assert.equal(allowed.keys.revalidated, 304);
  assert.deepEqual(allowed.token, { status: 200, type: 'Bearer' });
  assert.equal(allowed.orders.status, 200);
  assert.match(allowed.orders.requestId, /^req_/, 'exposed headers are readable');
  assert.equal(allowed.orders.cursor, '');
  assert.match(allowed.orders.remaining, /^\d+$/);
  assert.deepEqual(allowed.attestation, { status: 201, level: 'KYC2' });
  // The token exchange (JSON), the authenticated read and the POST each took a preflight; the
  // revalidation of the public document (If-None-Match) too.
  for (const expected of [
    `${allowedApp} POST /v1/auth/token`,
    `${allowedApp} GET /v1/orders?limit=1`,
    `${allowedApp} POST /v1/kyc/attestations`,
    `${allowedApp} GET /.well-known/jwks.json`,
  ]) {
    assert.ok(preflights.includes(expected), `${expected} in ${JSON.stringify(preflights)}`);
  }
  assert.deepEqual(consoleErrors, []);

  await page.goto(`${otherApp}/`);
  const other = (await page.evaluate(SCRIPT(api, client.client_id, client.client_secret, attestation))) as Json;
  assert.equal(other.keys.status, 200, 'the public documents are readable from any origin');
  assert.equal(other.keys.revalidated, 304);
  assert.match(String(other.token.failed), /TypeError: Failed to fetch/, 'the API refuses the origin');
  assert.equal(other.orders, undefined);
  assert.ok(
    consoleErrors.some((e) => /blocked by CORS policy/.test(e)),
    JSON.stringify(consoleErrors),
  );
  // The refused preflight: nothing was exchanged, so nothing was issued.
  assert.ok(preflights.includes(`${otherApp} POST /v1/auth/token`));
  const issued = await runtime.storage.db.selectFrom('attestations').select('id').execute();
  assert.equal(issued.length, 1, 'only the allowed app issued an attestation');
});

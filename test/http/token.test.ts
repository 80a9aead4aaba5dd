import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'openid-client';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Runtime } from '../../src/app.js';

async function setup(
  t: import('node:test').TestContext,
  database: (typeof DATABASES)[number],
  env: Record<string, string> = {},
  clock?: ManualClock,
) {
  const runtime = await startRuntime(t, database, env, clock === undefined ? {} : { clock });
  const base = await listen(runtime);
  const client = await runtime.services.clients.create('acme', ['orders:read', 'orders:write', 'kyc:read']);
  return { runtime, base, client };
}

function postJson(base: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function postForm(base: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
}

async function expectError(res: Response, status: number, code: string, oauthError: string, field?: string, rule?: string) {
  const body = (await res.json()) as {
    code: string;
    message: string;
    error: string;
    error_description: string;
    request_id: string;
    details?: { field: string; rule: string }[];
  };
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.code, code);
  assert.equal(body.error, oauthError);
  assert.equal(body.error_description, body.message);
  assert.equal(body.request_id, res.headers.get('x-request-id'));
  if (field !== undefined)
    assert.ok(
      body.details?.some((d) => d.field === field && d.rule === rule),
      JSON.stringify(body.details),
    );
}

for (const database of DATABASES) {
  describe(`POST /v1/auth/token on ${database.name}`, () => {
    test('JSON body: the spec TokenResponse, verifiable with the published keys', async (t) => {
      const { base, client, runtime } = await setup(t, database);
      const res = await postJson(base, {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('x-ratelimit-limit'), '1000');
      assert.equal(res.headers.get('x-ratelimit-remaining'), '999');
      const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number; scope: string };
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 900);
      assert.equal(body.scope, 'orders:read orders:write kyc:read', 'omitted scope grants every allowed scope');
      const jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
      const { payload, protectedHeader } = await jwtVerify(body.access_token, jwks, {
        algorithms: ['EdDSA'],
        issuer: runtime.config.publicUrl,
        audience: `${runtime.config.publicUrl}/v1`,
      });
      assert.equal(protectedHeader.alg, 'EdDSA');
      assert.equal(payload.sub, client.client_id);
      assert.equal(payload.scope, 'orders:read orders:write kyc:read');
      assert.equal(payload.livemode, false);
      assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), 900);
    });

    test('form body and HTTP Basic, narrowed scope, unknown form parameters ignored', async (t) => {
      const { base, client } = await setup(t, database);
      const basic = Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64');
      const res = await postForm(base, 'grant_type=client_credentials&scope=orders%3Aread&resource=x', { authorization: `Basic ${basic}` });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { scope: string }).scope, 'orders:read');
      const inBody = await postForm(
        base,
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client.client_id,
          client_secret: client.client_secret,
        }).toString(),
      );
      assert.equal(inBody.status, 200);
      // HTTP Basic with the client_id repeated in the body, as some client libraries send it (RFC 6749 §3.2.1).
      const basicAndId = await postForm(base, `grant_type=client_credentials&client_id=${client.client_id}`, {
        authorization: `Basic ${basic}`,
      });
      assert.equal(basicAndId.status, 200, await basicAndId.clone().text());
    });

    test('a standard OAuth 2.0 client library obtains a token unchanged', async (t) => {
      const { base, client } = await setup(t, database);
      for (const auth of [oauth.ClientSecretBasic(client.client_secret), oauth.ClientSecretPost(client.client_secret)]) {
        const config = new oauth.Configuration(
          { issuer: base, token_endpoint: `${base}/v1/auth/token` },
          client.client_id,
          undefined,
          auth,
        );
        oauth.allowInsecureRequests(config);
        const tokens = await oauth.clientCredentialsGrant(config, { scope: 'orders:read kyc:read' });
        assert.equal(tokens.token_type.toLowerCase(), 'bearer');
        assert.equal(tokens.expires_in, 900);
        assert.equal(tokens.scope, 'orders:read kyc:read');
      }
    });

    test('bad requests get 401 or 422 with the OAuth error member', async (t) => {
      const { base, client } = await setup(t, database);
      const good = { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret };
      await expectError(
        await postJson(base, { ...good, grant_type: 'password' }),
        422,
        'validation_error',
        'unsupported_grant_type',
        'grant_type',
        'enum',
      );
      await expectError(
        await postJson(base, { grant_type: 'client_credentials', client_secret: client.client_secret }),
        422,
        'validation_error',
        'invalid_request',
        'client_id',
        'required',
      );
      await expectError(
        await postJson(base, { grant_type: 'client_credentials', client_id: client.client_id }),
        422,
        'validation_error',
        'invalid_request',
        'client_secret',
        'required',
      );
      await expectError(
        await postJson(base, { ...good, client_secret: `${client.client_secret.slice(0, -1)}x` }),
        401,
        'unauthorized',
        'invalid_client',
      );
      await expectError(
        await postJson(base, { ...good, client_secret: client.client_secret.replace('sk_test_', 'sk_live_') }),
        401,
        'unauthorized',
        'invalid_client',
      );
      await expectError(await postJson(base, { ...good, client_id: 'cli_nobody' }), 401, 'unauthorized', 'invalid_client');
      await expectError(
        await postJson(base, { ...good, scope: 'orders:read teleport' }),
        422,
        'validation_error',
        'invalid_scope',
        'scope',
        'enum',
      );
      await expectError(
        await postJson(base, { ...good, scope: 'audit:read' }),
        422,
        'validation_error',
        'invalid_scope',
        'scope',
        'allowed_scope',
      );
      await expectError(
        await postJson(base, { ...good, extra: 1 }),
        422,
        'validation_error',
        'invalid_request',
        'extra',
        'additionalProperties',
      );
      await expectError(await postJson(base, { ...good, client_id: 5 }), 422, 'validation_error', 'invalid_request', 'client_id', 'type');
      await expectError(
        await postForm(
          base,
          `grant_type=client_credentials&client_id=${client.client_id}&client_id=${client.client_id}&client_secret=${client.client_secret}`,
        ),
        422,
        'validation_error',
        'invalid_request',
        'client_id',
        'duplicate',
      );
      const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
      await expectError(
        await postJson(base, good, { authorization: `Basic ${basic}` }),
        422,
        'validation_error',
        'invalid_request',
        'client_secret',
        'single_authentication_method',
      );
      await expectError(
        await postForm(base, 'grant_type=client_credentials&client_id=cli_someone_else', { authorization: `Basic ${basic}` }),
        422,
        'validation_error',
        'invalid_request',
        'client_id',
        'basic_client_id',
      );
      const unsupported = await fetch(`${base}/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      assert.equal(unsupported.headers.get('content-type'), 'application/json; charset=utf-8');
      const refused = (await unsupported.clone().json()) as { message: string };
      assert.equal(refused.message, 'Content-Type must be application/json or application/x-www-form-urlencoded');
      await expectError(unsupported, 415, 'unsupported_media_type', 'invalid_request');
      const wrongBasic = await postForm(base, 'grant_type=client_credentials', {
        authorization: `Basic ${Buffer.from(`${client.client_id}:nope`).toString('base64')}`,
      });
      assert.equal(wrongBasic.headers.get('www-authenticate'), 'Basic realm="token"');
      await expectError(wrongBasic, 401, 'unauthorized', 'invalid_client');
      const malformed = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"grant_type":',
      });
      assert.equal(malformed.status, 422);
    });

    test('a client secret is never echoed in an error body', async (t) => {
      const { base, client } = await setup(t, database);
      const secret = client.client_secret;
      const refusals = [
        // Repeated in a form body: either copy may be the real secret.
        await postForm(base, `grant_type=client_credentials&client_id=${client.client_id}&client_secret=x&client_secret=${secret}`),
        // The real secret with something pasted after it, past the length limit.
        await postJson(base, {
          grant_type: 'client_credentials',
          client_id: client.client_id,
          client_secret: `${secret}${'x'.repeat(200)}`,
        }),
      ];
      for (const res of refusals) {
        const text = await res.text();
        assert.equal(res.status, 422, text);
        assert.ok(!text.includes(secret), text);
        const body = JSON.parse(text) as { error: string; details: { field: string; value: unknown }[] };
        assert.equal(body.error, 'invalid_request');
        assert.deepEqual(
          body.details.map((d) => [d.field, d.value]),
          [['client_secret', null]],
        );
      }
      // Other members are still echoed as sent.
      const other = await postJson(base, { grant_type: 'client_credentials', client_id: 42, client_secret: secret });
      assert.deepEqual(((await other.json()) as { details: { field: string; value: unknown }[] }).details[0], {
        field: 'client_id',
        rule: 'type',
        value: 42,
        message: 'must be string',
      });
    });

    test('a rotated-out secret fails after 24 hours; a disabled client gets no token', async (t) => {
      const clock = new ManualClock();
      const { base, client, runtime } = await setup(t, database, {}, clock);
      const rotated = await runtime.services.clients.rotateSecret(client.client_id);
      const exchange = (secret: string) =>
        postJson(base, { grant_type: 'client_credentials', client_id: client.client_id, client_secret: secret });
      assert.equal((await exchange(client.client_secret)).status, 200);
      clock.advance(24 * 3600 * 1000);
      await expectError(await exchange(client.client_secret), 401, 'unauthorized', 'invalid_client');
      assert.equal((await exchange(rotated?.client_secret ?? '')).status, 200);
      await runtime.services.clients.setDisabled(client.client_id, true);
      await expectError(await exchange(rotated?.client_secret ?? ''), 401, 'unauthorized', 'invalid_client');
    });

    test('a verified exchange counts once against its client, in fixed one-minute windows; a failed one does not', async (t) => {
      const clock = new ManualClock('2026-11-22T10:00:30.000Z');
      // Each request from an address of its own (behind a trusted proxy): only the client's count adds up.
      const { base, client } = await setup(t, database, { CAURI_RATE_LIMIT_SANDBOX: '3', CAURI_TRUST_PROXY: 'true' }, clock);
      const exchange = (from: string, secret = client.client_secret) =>
        postJson(
          base,
          { grant_type: 'client_credentials', client_id: client.client_id, client_secret: secret },
          { 'x-forwarded-for': from },
        );
      await expectError(await exchange('192.0.2.1', `${client.client_secret}x`), 401, 'unauthorized', 'invalid_client');
      for (let i = 0; i < 3; i++) {
        const res = await exchange(`192.0.2.${10 + i}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-ratelimit-remaining'), String(2 - i));
        assert.equal(res.headers.get('x-ratelimit-reset'), String(Date.parse('2026-11-22T10:01:00Z') / 1000));
      }
      const limited = await exchange('192.0.2.20');
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '30');
      assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(((await limited.json()) as { code: string }).code, 'rate_limit_exceeded');
      clock.advance(30_000);
      assert.equal((await exchange('192.0.2.20')).status, 200, 'a new window');
    });
  });
}

export type { Runtime };

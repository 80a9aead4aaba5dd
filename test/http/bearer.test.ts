import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { DATABASES, listen, startRuntimeIn, testEnvironment, type DatabaseCase } from '../support/harness.js';
import { apiClient } from '../support/api.js';
import { ManualClock } from '../../src/lib/clock.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A running service with a manual clock and a client of scope kyc:read, its token split in parts. */
async function withKycReader(t: TestContext, database: DatabaseCase) {
  const clock = new ManualClock(new Date());
  const runtime = await startRuntimeIn(t, testEnvironment(t, database, {}, { clock }));
  const base = await listen(runtime);
  const api = await apiClient(runtime, base, ['kyc:read']);
  const path = '/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz';
  const [h, p, s] = api.token.split('.') as [string, string, string];
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  return { clock, runtime, base, api, path, h, p, s, payload };
}

for (const database of DATABASES) {
  describe(`bearer check on protected routes, ${database.name}`, () => {
    test('every bad token is 401 unauthorized with WWW-Authenticate; a missing scope is 403', async (t) => {
      const { clock, runtime, base, api, path, h, p, s, payload } = await withKycReader(t, database);
      const key = await runtime.services.keys.current('token');
      const hs = b64({ alg: 'HS256', typ: 'at+jwt', kid: key.id });
      const wrongAud = await new SignJWT({ ...payload, aud: 'https://other.example' })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: key.id })
        .sign(key.privateKeyObject);
      const unknownKid = await new SignJWT(payload)
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: 'key_01kdvdna00zzzzzzzzzzzzzzzz' })
        .sign(key.privateKeyObject);
      const headers: [string, Record<string, string>][] = [
        ['missing', {}],
        ['not bearer', { authorization: `Token ${api.token}` }],
        ['empty bearer', { authorization: 'Bearer ' }],
        ['garbage', { authorization: 'Bearer abc.def' }],
        ['tampered payload', { authorization: `Bearer ${h}.${b64({ ...payload, scope: 'kyc:read kyc:write' })}.${s}` }],
        ['tampered signature', { authorization: `Bearer ${h}.${p}.${s.slice(0, -3)}AAA` }],
        ['alg none', { authorization: `Bearer ${b64({ alg: 'none', typ: 'at+jwt' })}.${p}.` }],
        [
          'HS256 with the public key',
          {
            authorization: `Bearer ${hs}.${p}.${createHmac('sha256', Buffer.from(key.publicKey, 'base64url')).update(`${hs}.${p}`).digest('base64url')}`,
          },
        ],
        ['wrong aud', { authorization: `Bearer ${wrongAud}` }],
        ['unknown kid', { authorization: `Bearer ${unknownKid}` }],
      ];
      for (const [name, header] of headers) {
        const res = await fetch(`${base}${path}`, { headers: header });
        assert.equal(res.status, 401, name);
        // No bearer token at all gets the bare challenge; a bad one names the error (RFC 6750 §3.1).
        const challenge = name === 'missing' || name === 'not bearer' ? 'Bearer' : 'Bearer error="invalid_token"';
        assert.equal(res.headers.get('www-authenticate'), challenge, name);
        assert.ok(res.headers.has('x-ratelimit-limit'), `${name}: rate headers on every API response`);
        const body = (await res.json()) as { code: string; request_id: string };
        assert.equal(body.code, 'unauthorized', name);
      }

      // The HEAD route Fastify adds beside each GET is checked the same way.
      const head = await fetch(`${base}${path}`, { method: 'HEAD' });
      assert.equal(head.status, 401, 'HEAD without a token');
      assert.equal(
        (await fetch(`${base}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${api.token}` } })).status,
        404,
        'HEAD with a token reaches the route',
      );
      const ok = await api.call('GET', path);
      assert.equal(ok.status, 404, 'a valid token reaches the route');
      const forbidden = await api.post('/v1/kyc/attestations', {});
      assert.equal(forbidden.status, 403);
      assert.deepEqual(await forbidden.json(), {
        code: 'forbidden',
        message: 'Missing scope: kyc:write',
        request_id: forbidden.headers.get('x-request-id'),
      });
      assert.match(forbidden.headers.get('www-authenticate') ?? '', /insufficient_scope/);

      clock.advance(900_000);
      const expired = await api.call('GET', path);
      assert.equal(expired.status, 401);
      assert.equal(((await expired.json()) as { message: string }).message, 'Access token expired');
    });

    test('a token verified once is remembered for its exact bytes only; the remembered path answers like the full check', async (t) => {
      const { clock, base, api, path, h, p, s, payload } = await withKycReader(t, database);
      assert.equal((await api.call('GET', path)).status, 404, 'verified, and now remembered');
      // The same signature (the cache's key) under another payload or header must not ride on it.
      const forged = [
        `${h}.${b64({ ...payload, scope: 'kyc:read kyc:write' })}.${s}`,
        `${h}.${b64({ ...payload, sub: 'cli_01kdvdna00zzzzzzzzzzzzzzzz' })}.${s}`,
        `${b64({ alg: 'EdDSA', typ: 'at+jwt', kid: 'other' })}.${p}.${s}`,
        `x${api.token}`,
      ];
      for (const token of forged) {
        const res = await fetch(`${base}/v1/kyc/attestations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(res.status, 401, token);
      }
      assert.equal((await api.call('GET', path)).status, 404, 'the genuine token still works');
      const lower = await fetch(`${base}${path}`, { headers: { authorization: `bearer ${api.token}` } });
      assert.equal(lower.status, 404, 'the scheme is case-insensitive');
      const forbidden = await api.post('/v1/kyc/attestations', {});
      assert.equal(forbidden.status, 403, 'a remembered token still lacks the scope it lacks');
      clock.advance(900_000);
      assert.equal((await api.call('GET', path)).status, 401, 'and expires on time');
    });

    test('disabling a client stops its tokens at once, also on another process of the deployment (on PostgreSQL once the change notification arrives)', async (t) => {
      const env = testEnvironment(t, database);
      const first = await startRuntimeIn(t, env);
      const second = await startRuntimeIn(t, env);
      const [base1, base2] = [await listen(first), await listen(second)];
      const api = await apiClient(first, base1, ['kyc:read']);
      const path = '/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz';
      const onSecond = () => fetch(`${base2}${path}`, { headers: { authorization: `Bearer ${api.token}` } });
      assert.equal((await onSecond()).status, 404, 'the token works on the other process (verified and cached)');
      await first.services.clients.setDisabled(api.clientId, true);
      // SQLite: at once. PostgreSQL: with the notification of the change, within milliseconds
      // (docs/production.md), later on a loaded machine.
      let status = (await onSecond()).status;
      for (const until = Date.now() + 5000; status !== 401 && database.name !== 'sqlite' && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await onSecond()).status;
      }
      assert.equal(status, 401);
      assert.equal((await api.call('GET', path)).status, 401);
    });

    test('protected routes count against the client id; 429 carries Retry-After', async (t) => {
      const clock = new ManualClock('2026-11-22T10:00:10.000Z');
      const env = testEnvironment(t, database, { CAURI_RATE_LIMIT_SANDBOX: '5' }, { clock });
      const runtime = await startRuntimeIn(t, env);
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['kyc:read']);
      const path = '/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz';
      // The token exchange counted once against the same client id.
      for (let i = 0; i < 4; i++) assert.equal((await api.call('GET', path)).status, 404);
      const limited = await api.call('GET', path);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '50');
      assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(limited.headers.get('x-ratelimit-reset'), String(Date.parse('2026-11-22T10:01:00Z') / 1000));
      const publicRoute = await fetch(`${base}/v1/sgi/partners`);
      assert.equal(publicRoute.status, 200, 'public routes count per address, not per client');
    });
  });
}

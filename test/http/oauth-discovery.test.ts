import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'openid-client';
import { DATABASES, startRuntime } from '../support/harness.js';
import { freePort } from '../docs/shell.js';
import { ALL_SCOPES } from '../../src/auth/scopes.js';

/**
 * A deployment listening on a loopback port, whose public URL (the issuer, which must be the URL
 * clients discover from) is given for that port: the address itself, or a proxy's (see `proxy`).
 */
async function deployment(t: TestContext, database: (typeof DATABASES)[number], publicUrl: (port: number) => string) {
  const port = await freePort();
  const issuer = publicUrl(port);
  const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none', CAURI_PUBLIC_URL: issuer });
  await runtime.app.listen({ host: '127.0.0.1', port });
  const client = await runtime.services.clients.create('discovering app', ['orders:read', 'orders:write', 'kyc:read']);
  return { runtime, issuer, client, port };
}

/**
 * A reverse proxy on loopback that serves the service under `prefix`, and passes the RFC 8414
 * well-known paths of that prefix through unchanged (they begin at the host's root).
 */
async function proxy(t: TestContext, prefix: string): Promise<{ port: number; target: (port: number) => void }> {
  let upstream = 0;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.startsWith('/.well-known/') ? url : url.startsWith(`${prefix}/`) ? url.slice(prefix.length) : null;
    if (path === null) {
      res.writeHead(404).end();
      return;
    }
    const forward = httpRequest({ host: '127.0.0.1', port: upstream, method: req.method, path, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, target: (port) => void (upstream = port) };
}

for (const database of DATABASES) {
  describe(`OAuth 2.0 discovery (RFC 8414) with openid-client on ${database.name}`, () => {
    test('discovery() finds the token endpoint; the client credentials grant gives a token whose iss is the issuer, verified with the discovered keys', async (t) => {
      const { runtime, issuer, client } = await deployment(t, database, (port) => `http://127.0.0.1:${port}`);

      const raw = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
      assert.equal(raw.status, 200);
      assert.deepEqual(await raw.json(), {
        issuer,
        token_endpoint: `${issuer}/v1/auth/token`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        scopes_supported: [...ALL_SCOPES],
        response_types_supported: [],
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        service_documentation: `${issuer}/docs`,
      });
      // The service is no OpenID provider: it issues no ID tokens, and has no OpenID discovery document.
      assert.equal((await fetch(`${issuer}/.well-known/openid-configuration`)).status, 404);

      // Plain http is refused by openid-client unless allowed: it is, here, on loopback.
      for (const authentication of [oauth.ClientSecretBasic(client.client_secret), oauth.ClientSecretPost(client.client_secret)]) {
        const config = await oauth.discovery(new URL(issuer), client.client_id, undefined, authentication, {
          algorithm: 'oauth2',
          execute: [oauth.allowInsecureRequests],
        });
        const metadata = config.serverMetadata();
        assert.equal(metadata.issuer, issuer);
        assert.equal(metadata.token_endpoint, `${issuer}/v1/auth/token`);

        const tokens = await oauth.clientCredentialsGrant(config, { scope: 'orders:read' });
        assert.equal(tokens.token_type.toLowerCase(), 'bearer');
        assert.equal(tokens.expires_in, 900);
        assert.equal(tokens.scope, 'orders:read');
        const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(metadata.jwks_uri!)), {
          algorithms: ['EdDSA'],
          issuer: metadata.issuer,
          audience: `${runtime.config.publicUrl}/v1`,
        });
        assert.equal(payload.sub, client.client_id);

        const orders = await fetch(`${issuer}/v1/orders`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(orders.status, 200);
        await orders.text();
      }
    });

    test('token endpoint errors reach openid-client as OAuth errors with their description; the spec body stays', async (t) => {
      const { issuer, client } = await deployment(t, database, (port) => `http://127.0.0.1:${port}`);
      const discover = (secret: string) =>
        oauth.discovery(new URL(issuer), client.client_id, undefined, oauth.ClientSecretPost(secret), {
          algorithm: 'oauth2',
          execute: [oauth.allowInsecureRequests],
        });

      const refusal = async (config: oauth.Configuration, scope?: string) => {
        try {
          await oauth.clientCredentialsGrant(config, scope === undefined ? {} : { scope });
        } catch (error) {
          assert.ok(error instanceof oauth.ResponseBodyError, String(error));
          return error;
        }
        assert.fail('the grant was expected to fail');
      };

      const badSecret = await refusal(await discover('sk_test_wrong'));
      assert.equal(badSecret.status, 401);
      assert.equal(badSecret.error, 'invalid_client');
      assert.equal(badSecret.error_description, 'Invalid client credentials');
      const body = badSecret.cause as Record<string, unknown>;
      assert.equal(body.code, 'unauthorized');
      assert.equal(body.message, 'Invalid client credentials');
      assert.match(String(body.request_id), /^req_/);

      const notAllowed = await refusal(await discover(client.client_secret), 'audit:read');
      assert.equal(notAllowed.status, 422);
      assert.equal(notAllowed.error, 'invalid_scope');
      assert.equal(notAllowed.error_description, 'Scope audit:read is not allowed for this client');
      assert.deepEqual((notAllowed.cause as { details: unknown[] }).details, [
        { field: 'scope', rule: 'allowed_scope', value: 'audit:read' },
      ]);
    });

    test("an issuer with a path: the metadata is at the well-known path followed by the issuer's path (RFC 8414 §3), behind a proxy", async (t) => {
      const front = await proxy(t, '/cauri');
      const { issuer, client, port } = await deployment(t, database, () => `http://127.0.0.1:${front.port}/cauri`);
      front.target(port);

      const config = await oauth.discovery(new URL(issuer), client.client_id, undefined, oauth.ClientSecretBasic(client.client_secret), {
        algorithm: 'oauth2',
        execute: [oauth.allowInsecureRequests],
      });
      assert.equal(config.serverMetadata().issuer, issuer);
      assert.equal(config.serverMetadata().token_endpoint, `${issuer}/v1/auth/token`);
      const tokens = await oauth.clientCredentialsGrant(config, { scope: 'kyc:read' });
      assert.equal(decodeJwt(tokens.access_token).iss, issuer);
      const read = await fetch(`${issuer}/v1/kyc/attestations/att_00000000000000000000000000`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(read.status, 404, 'the token is accepted; the attestation does not exist');
      await read.text();
      // The service answers the metadata only where RFC 8414 puts it for this issuer.
      const direct = `http://127.0.0.1:${port}`;
      assert.equal((await fetch(`${direct}/.well-known/oauth-authorization-server/cauri`)).status, 200);
      assert.equal((await fetch(`${direct}/.well-known/oauth-authorization-server`)).status, 404);
    });
  });
}

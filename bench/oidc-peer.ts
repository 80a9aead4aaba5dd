/**
 * The peer: panva's oidc-provider (a certified OAuth 2.0 / OpenID Connect server) with one
 * confidential client and the client-credentials grant, issuing JWT access tokens signed with
 * Ed25519 (EdDSA) for one resource server, like cauri's own tokens. In-memory storage (its default
 * adapter), no logging. Runs in its own process; prints {"address":"http://..."} once listening.
 *
 * Env: PEER_CLIENT_ID, PEER_CLIENT_SECRET (defaults in constants.ts), PORT (default 0).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_RESOURCE, PEER_SCOPE } from './constants.js';

const clientId = process.env.PEER_CLIENT_ID ?? PEER_CLIENT_ID;
const clientSecret = process.env.PEER_CLIENT_SECRET ?? PEER_CLIENT_SECRET;

const server = createServer();
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? '0'), '127.0.0.1', resolve));
const addr = server.address();
if (typeof addr !== 'object' || addr === null) throw new Error('no address');
const issuer = `http://127.0.0.1:${addr.port}`;

// An Ed25519 key for access tokens (as cauri signs its own), and the RS256 key the provider
// requires by default for ID tokens (unused by this grant).
const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: PEER_SCOPE,
    },
  ],
  scopes: PEER_SCOPE.split(' '),
  jwks: {
    keys: [
      { ...ed, kid: 'ed', alg: 'EdDSA', use: 'sig' },
      { ...rsa, kid: 'rsa', alg: 'RS256', use: 'sig' },
    ],
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => PEER_RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx: unknown, resource: string) => {
        if (resource !== PEER_RESOURCE) throw new Error(`unknown resource ${resource}`);
        return {
          scope: PEER_SCOPE,
          audience: PEER_RESOURCE,
          accessTokenTTL: 900,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'EdDSA' } },
        };
      },
    },
  },
});

// Surface unexpected server errors on stderr (the harness reports non-2xx answers itself).
provider.on('server_error', (_ctx: unknown, error: unknown) => process.stderr.write(`server_error: ${String(error)}\n`));

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ msg: 'oidc-provider peer listening', address: issuer })}\n`);

const shutdown = () => server.close(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

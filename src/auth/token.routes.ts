import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError, type ErrorDetail } from '../lib/errors.js';
import { detailsFromAjv } from '../lib/validation.js';
import { missingBody, sendError, toApiError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { authorizationServerMetadataPath } from '../http/openapi.js';
import { errorResponse, StringEnum } from '../http/schemas.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientService } from './client.service.js';
import type { CredentialGuard } from './credential-guard.js';
import { ALL_SCOPES, isScope, type Scope } from './scopes.js';
import { TOKEN_LIFETIME_SECONDS, type TokenService } from './token.service.js';

const TokenRequest = Type.Object(
  {
    grant_type: StringEnum(['client_credentials'], { description: 'Only value: client_credentials' }),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 200 })),
    scope: Type.Optional(Type.String({ maxLength: 1000, description: `Space-separated scopes among: ${ALL_SCOPES.join(', ')}` })),
  },
  { additionalProperties: false, title: 'TokenRequest' },
);

const TokenResponse = Type.Object(
  {
    access_token: Type.String({ description: 'Bearer token in JWT format' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Lifetime in seconds: 900' }),
    scope: Type.String({ description: 'Space-separated granted scopes' }),
  },
  { title: 'TokenResponse' },
);

const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        kty: Type.Literal('OKP'),
        crv: Type.Literal('Ed25519'),
        x: Type.String(),
        kid: Type.String(),
        alg: Type.Literal('EdDSA'),
        use: Type.Literal('sig'),
      }),
    ),
  },
  { title: 'JsonWebKeySet' },
);

const AuthorizationServerMetadata = Type.Object(
  {
    issuer: Type.String({ format: 'uri', description: 'Equal to the `iss` claim of every access token.' }),
    token_endpoint: Type.String({ format: 'uri' }),
    jwks_uri: Type.String({ format: 'uri', description: 'The keys that verify access tokens.' }),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String(), { description: 'Empty: there is no authorization endpoint.' }),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    service_documentation: Type.String({ format: 'uri' }),
  },
  { title: 'AuthorizationServerMetadata', description: 'OAuth 2.0 authorization server metadata (RFC 8414).' },
);

type OAuthError =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable'
  | 'server_error';

/** The OAuth 2.0 members of a token endpoint error (RFC 6749 §5.2): the code, and the message as its description. */
function oauthMembers(error: OAuthError, message: string): Record<string, string> {
  return { error, error_description: message };
}

function oauthError(
  status: 'validation_error' | 'unauthorized',
  error: OAuthError,
  message: string,
  details?: ErrorDetail[],
  headers?: Record<string, string>,
): ApiError {
  return new ApiError(status, message, {
    extra: oauthMembers(error, message),
    ...(details === undefined ? {} : { details }),
    ...(headers === undefined ? {} : { headers }),
  });
}

/**
 * The OAuth error code of a refusal that did not choose one (a body the parser refused, a rate limit,
 * a failure): RFC 6749 §5.2 has no code for the last two, so those of §4.1.2.1 serve.
 */
function oauthErrorOf(status: number): OAuthError {
  if (status === 401) return 'invalid_client';
  if (status === 429) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * Form bodies per RFC 6749 §3.2: a parameter sent more than once is an invalid request, so they are
 * parsed here rather than by a generic parser that would turn repeats into arrays.
 */
function parseForm(_request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) {
      done(oauthError('validation_error', 'invalid_request', `Parameter ${name} is repeated`, [{ field: name, rule: 'duplicate', value }]));
      return;
    }
    fields[name] = value;
  }
  done(null, fields);
}

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1: each part form-encoded, then base64). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null | 'malformed' {
  if (header === undefined || !/^Basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

const TOKEN_MEDIA_TYPES = 'application/json or application/x-www-form-urlencoded';

export interface TokenRouteDeps {
  clients: ClientService;
  tokens: TokenService;
  keys: KeyRing;
  limiter: RateLimiter;
  guard: CredentialGuard;
}

/**
 * Every error of the token endpoint carries the OAuth members (RFC 6749 §5.2), also one refused before
 * the handler runs (a body parser, the rate limit) or a failure.
 */
function withOAuthMember(error: unknown, request: FastifyRequest): ApiError {
  const apiError = toApiError(error, request);
  if (apiError.extra !== undefined) return apiError;
  // The generic refusal names JSON only; this endpoint also takes a form.
  const message = apiError.code === 'unsupported_media_type' ? `Content-Type must be ${TOKEN_MEDIA_TYPES}` : apiError.message;
  return apiError.with({ message, extra: oauthMembers(oauthErrorOf(apiError.status), message) });
}

/**
 * A client secret is never echoed in an error body (a repeated or overlong `client_secret` could be
 * the real one, and error bodies end up in clients' logs): its details carry `value: null`, as a
 * malformed HTTP Basic header's do.
 */
function withoutSecretValues(error: ApiError): ApiError {
  if (!error.details?.some((d) => d.field === 'client_secret' && d.value !== null)) return error;
  return error.with({ details: error.details.map((d) => (d.field === 'client_secret' ? { ...d, value: null } : d)) });
}

/**
 * The token endpoint is a public route: like the others, every request counts against its address
 * (installAuthentication's hook, before the body is read, so 415 and 422 carry the headers too). Failed
 * credential checks count in the guard's buckets; only a verified secret counts against its client.
 */
export const tokenRoutes: FastifyPluginAsyncTypebox<TokenRouteDeps> = async (app, { clients, tokens, keys, limiter, guard }) => {
  const issuer = tokens.issuer;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, parseForm);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, withoutSecretValues(withOAuthMember(error, request))));

  app.post(
    '/v1/auth/token',
    {
      attachValidation: true,
      schema: {
        operationId: 'createAccessToken',
        tags: ['Authentication'],
        summary: 'Exchange client credentials for an access token (OAuth 2.0 client credentials grant)',
        description:
          'JSON or application/x-www-form-urlencoded; credentials in the body or in HTTP Basic (RFC 6749 §2.3.1). ' +
          'Errors carry the OAuth `error` and `error_description` members beside the error body. Unknown form parameters are ignored (RFC 6749 §3.2); unknown JSON members are refused.',
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        // Open, unlike the other routes' query strings: unknown request parameters are ignored (RFC 6749 §3.2).
        querystring: Type.Object({}),
        body: TokenRequest,
        response: {
          200: TokenResponse,
          401: errorResponse('`unauthorized`, OAuth `invalid_client`: unknown client, wrong or expired secret, disabled client.'),
          415: errorResponse(`\`unsupported_media_type\`, OAuth \`invalid_request\`: the body is not ${TOKEN_MEDIA_TYPES}.`),
          422: errorResponse(
            '`validation_error`, OAuth `invalid_request`, `unsupported_grant_type` or `invalid_scope`; `details` says which field.',
          ),
          429: errorResponse(
            '`rate_limit_exceeded`, OAuth `temporarily_unavailable`: over the rate limit, or too many failed authentications; retry after `Retry-After` seconds.',
          ),
        },
      },
    },
    async (request, reply) => {
      if (request.body === undefined) throw withOAuthMember(missingBody(), request);
      const isForm = (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
      const problems =
        request.validationError === undefined ? [] : detailsFromAjv((request.validationError as { validation: ErrorObject[] }).validation);
      const relevant = isForm ? problems.filter((d) => d.rule !== 'additionalProperties') : problems;
      // A grant type that is a string but not ours is the one refusal with a code of its own (RFC 6749 §5.2).
      const [first] = relevant;
      if (relevant.length === 1 && first?.field === 'grant_type' && first.rule === 'enum')
        throw oauthError('validation_error', 'unsupported_grant_type', 'Only grant_type client_credentials is supported', relevant);
      if (first !== undefined) throw oauthError('validation_error', 'invalid_request', `Invalid ${first.field}: ${first.rule}`, relevant);
      const body = request.body as Static<typeof TokenRequest>;

      const basic = basicCredentials(request.headers.authorization);
      if (basic === 'malformed')
        throw oauthError('validation_error', 'invalid_request', 'Malformed HTTP Basic credentials', [
          { field: 'Authorization', rule: 'format', value: null },
        ]);
      // One authentication method per request (RFC 6749 §2.3): a secret in the body beside HTTP Basic
      // is a second one. A client_id in the body only names the client (§3.2.1, as some client
      // libraries send it), so it is accepted when it names the client that Basic authenticates.
      if (basic !== null && body.client_secret !== undefined) {
        throw oauthError('validation_error', 'invalid_request', 'Send client credentials either in HTTP Basic or in the body, not both', [
          { field: 'client_secret', rule: 'single_authentication_method', value: null },
        ]);
      }
      if (basic !== null && body.client_id !== undefined && body.client_id !== basic.id) {
        throw oauthError('validation_error', 'invalid_request', 'client_id differs from the client of the HTTP Basic credentials', [
          { field: 'client_id', rule: 'basic_client_id', value: body.client_id },
        ]);
      }
      const clientId = basic === null ? body.client_id : basic.id;
      const secret = basic === null ? body.client_secret : basic.secret;
      if (clientId === undefined || clientId === '')
        throw oauthError('validation_error', 'invalid_request', 'client_id is required', [
          { field: 'client_id', rule: 'required', value: null },
        ]);
      if (secret === undefined || secret === '')
        throw oauthError('validation_error', 'invalid_request', 'client_secret is required', [
          { field: 'client_secret', rule: 'required', value: null },
        ]);

      await guard.admit(reply, request.ip);
      const client = await clients.authenticate(clientId, secret);
      if (client === null) {
        await guard.failed(request.log, request.ip, clientId);
        throw oauthError(
          'unauthorized',
          'invalid_client',
          'Invalid client credentials',
          undefined,
          basic === null ? undefined : { 'www-authenticate': 'Basic realm="token"' },
        );
      }

      await limiter.enforce(reply, `cli:${client.id}`);

      let granted: Scope[] = client.scopes;
      if (body.scope !== undefined && body.scope.trim() !== '') {
        const asked = [...new Set(body.scope.trim().split(/ +/))];
        const unknown = asked.find((s) => !isScope(s));
        if (unknown !== undefined)
          throw oauthError('validation_error', 'invalid_scope', `Unknown scope ${unknown}`, [
            { field: 'scope', rule: 'enum', value: unknown },
          ]);
        const refused = asked.find((s) => !client.scopes.includes(s as Scope));
        if (refused !== undefined)
          throw oauthError('validation_error', 'invalid_scope', `Scope ${refused} is not allowed for this client`, [
            { field: 'scope', rule: 'allowed_scope', value: refused },
          ]);
        granted = asked as Scope[];
      }
      const accessToken = await tokens.issue(client.id, granted);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return { access_token: accessToken, token_type: 'Bearer' as const, expires_in: TOKEN_LIFETIME_SECONDS, scope: granted.join(' ') };
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getAccessTokenKeys',
        tags: ['Authentication'],
        summary: 'Public keys that verify access tokens (current and previous)',
        response: { 200: Jwks },
      },
    },
    async (_request, reply) => {
      const all = await keys.all('token');
      reply.header('cache-control', 'public, max-age=300');
      return {
        keys: all.slice(-2).map((k) => ({
          kty: 'OKP' as const,
          crv: 'Ed25519' as const,
          x: k.publicKey,
          kid: k.id,
          alg: 'EdDSA' as const,
          use: 'sig' as const,
        })),
      };
    },
  );

  const metadata: Static<typeof AuthorizationServerMetadata> = {
    issuer,
    token_endpoint: `${issuer}/v1/auth/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: [],
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    service_documentation: `${issuer}/docs`,
  };
  app.get(
    authorizationServerMetadataPath(issuer),
    {
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        tags: ['Authentication'],
        summary:
          'OAuth 2.0 authorization server metadata (RFC 8414): the token endpoint, its keys, grant types, client authentication methods and scopes',
        description:
          'For OAuth libraries that discover the token endpoint from the issuer (the `iss` of the access tokens, the public base URL). ' +
          "When the issuer has a path, the document is at this path followed by the issuer's path (RFC 8414 §3).",
        response: { 200: AuthorizationServerMetadata },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return metadata;
    },
  );
};

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { registeredRoutes } from '../../src/http/app.js';
import { ALL_SCOPES } from '../../src/auth/scopes.js';

interface Operation {
  operationId?: string;
  security?: unknown;
  parameters?: Array<{ $ref?: string }>;
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }>;
}

/**
 * Operation ids are part of the published interface (generated clients name their methods after
 * them): once published, an operation keeps its id.
 */
const STABLE_OPERATION_IDS: Record<string, string> = {
  'get /healthz': 'checkLiveness',
  'get /readyz': 'checkReadiness',
  'get /metrics': 'getMetrics',
  'get /v1/openapi.json': 'getOpenApiDocument',
  'post /v1/auth/token': 'createAccessToken',
  'get /.well-known/jwks.json': 'getAccessTokenKeys',
  'get /.well-known/oauth-authorization-server': 'getAuthorizationServerMetadata',
  'post /v1/auth/rotate-secret': 'rotateClientSecret',
  'get /v1/sgi/partners': 'listPartners',
  'get /v1/sgi/partners/{id}': 'getPartner',
  'get /v1/instruments': 'listInstruments',
  'get /v1/instruments/{code}': 'getInstrument',
  'get /v1/exchanges': 'listExchanges',
  'get /v1/exchanges/{code}/calendar': 'getExchangeCalendar',
  'get /v1/exchanges/{code}/clock': 'getExchangeClock',
  'post /v1/kyc/attestations': 'createAttestation',
  'get /v1/kyc/attestations/{id}': 'getAttestation',
  'get /v1/kyc/attestations/{id}/status': 'getAttestationStatus',
  'post /v1/kyc/attestations/{id}/revoke': 'revokeAttestation',
  'get /v1/kyc/crl': 'getRevocationList',
  'get /.well-known/cauri': 'getIssuerKeyDocument',
  'post /v1/orders': 'createOrder',
  'get /v1/orders': 'listOrders',
  'get /v1/orders/{id}': 'getOrder',
  'post /v1/orders/{id}/cancel': 'cancelOrder',
  'post /v1/orders/{id}/amend': 'amendOrder',
  'get /v1/orders/{id}/fills': 'listOrderFills',
  'post /v1/test-clocks': 'createTestClock',
  'get /v1/test-clocks': 'listTestClocks',
  'get /v1/test-clocks/{id}': 'getTestClock',
  'delete /v1/test-clocks/{id}': 'deleteTestClock',
  'post /v1/test-clocks/{id}/advance': 'advanceTestClock',
  'get /v1/audit/snapshots/{date}': 'getAuditSnapshot',
  'get /v1/audit/snapshots/{date}/proofs/{order_id}': 'getSnapshotProof',
  'post /v1/webhooks/endpoints': 'createWebhookEndpoint',
  'get /v1/webhooks/endpoints': 'listWebhookEndpoints',
  'get /v1/webhooks/endpoints/{id}': 'getWebhookEndpoint',
  'patch /v1/webhooks/endpoints/{id}': 'updateWebhookEndpoint',
  'delete /v1/webhooks/endpoints/{id}': 'deleteWebhookEndpoint',
  'post /v1/webhooks/endpoints/{id}/rotate-secret': 'rotateWebhookEndpointSecret',
  'post /v1/webhooks/endpoints/{id}/test': 'sendWebhookTestEvent',
  'post /v1/webhooks/endpoints/{id}/replay-dead': 'replayDeadDeliveries',
  'get /v1/webhooks/deliveries': 'listWebhookDeliveries',
  'get /v1/webhooks/deliveries/{id}': 'getWebhookDelivery',
  'post /v1/webhooks/deliveries/{id}/replay': 'replayWebhookDelivery',
  'get /v1/events': 'listEvents',
  'get /v1/events/{id}': 'getEvent',
  'get /v1/events/stream': 'streamEvents',
  'post /v1/events/{id}/resend': 'resendEvent',
};

test('the OpenAPI 3.1 document is valid and describes every route the server registers', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const res = await fetch(`${base}/v1/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as {
    openapi: string;
    info: { version: string; license?: { identifier?: string } };
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, unknown>; securitySchemes: unknown; parameters?: Record<string, unknown> };
  };
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.4.0');

  const validator = new Validator();
  const result = await validator.validate(doc as unknown as Parameters<Validator['validate']>[0]);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));

  // Every registered route outside the documentation UI appears, with its method.
  const registered = new Set<string>();
  for (const route of registeredRoutes(runtime.app)) {
    if (route.url.startsWith('/docs') || route.url.startsWith('/dashboard') || route.method === 'HEAD') continue;
    registered.add(`${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  }
  assert.ok(registered.size >= 8);
  const described = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
  for (const r of registered) assert.ok(described.has(r), `${r} is not described`);
  for (const d of ['GET /v1/sgi/partners', 'GET /v1/sgi/partners/{id}', 'GET /v1/instruments', 'GET /v1/instruments/{code}'])
    assert.ok(described.has(d), d);

  // Bodies that may be left out are documented so (the generator marks every body required).
  const bodyOf = (path: string) => (doc.paths[path]?.post as { requestBody?: { required?: boolean } }).requestBody;
  assert.equal(bodyOf('/v1/kyc/attestations/{id}/revoke')?.required, false);
  assert.equal(bodyOf('/v1/auth/rotate-secret')?.required, false);
  assert.equal(bodyOf('/v1/kyc/attestations')?.required, true);

  // Every operation has a stable camelCase operationId, unique; those below never change.
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op: op as Operation })),
  );
  const ids = operations.map(({ path, method, op }) => {
    assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${method.toUpperCase()} ${path} has no camelCase operationId`);
    return op.operationId;
  });
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const [key, id] of Object.entries(STABLE_OPERATION_IDS)) {
    const [method, path] = key.split(' ') as [string, string];
    assert.equal((doc.paths[path]?.[method] as Operation | undefined)?.operationId, id, `${key} keeps its operationId ${id}`);
  }

  // Security: public operations say so (an empty list), protected ones name their scope for both schemes.
  const security = (method: string, path: string) => (doc.paths[path]?.[method] as Operation).security;
  assert.deepEqual(security('get', '/v1/sgi/partners'), []);
  assert.deepEqual(security('post', '/v1/auth/token'), []);
  assert.deepEqual(security('post', '/v1/orders'), [{ oauth2: ['orders:write'] }, { bearerAuth: ['orders:write'] }]);
  assert.deepEqual(security('get', '/v1/audit/snapshots/{date}'), [{ oauth2: ['audit:read'] }, { bearerAuth: ['audit:read'] }]);
  // The client's own secret rotation verifies its token itself: a token is needed, no particular scope.
  assert.deepEqual(security('post', '/v1/auth/rotate-secret'), [{ oauth2: [] }, { bearerAuth: [] }]);
  const schemes = doc.components.securitySchemes as Record<
    string,
    { type: string; flows?: { clientCredentials?: { tokenUrl: string; scopes: Record<string, string> } } }
  >;
  assert.equal(schemes.oauth2?.type, 'oauth2');
  assert.equal(schemes.oauth2?.flows?.clientCredentials?.tokenUrl, `${runtime.config.publicUrl}/v1/auth/token`);
  assert.deepEqual(Object.keys(schemes.oauth2?.flows?.clientCredentials?.scopes ?? {}).sort(), [...ALL_SCOPES].sort());
  assert.equal(doc.info.license?.identifier, 'Apache-2.0');

  // Named schemas, referenced where they are used.
  for (const name of [
    'Order',
    'OrderRequest',
    'Fill',
    'KycAttestation',
    'KycAttestationRequest',
    'AttestationStatus',
    'SgiPartner',
    'Instrument',
    'WebhookEndpoint',
    'Event',
    'AuditSnapshot',
    'Error',
    'ErrorDetail',
    'TokenResponse',
  ]) {
    assert.ok(doc.components.schemas[name] !== undefined, `components.schemas.${name}`);
  }
  const success = (method: string, path: string, status: string) =>
    (doc.paths[path]?.[method] as Operation).responses[status]?.content?.['application/json']?.schema;
  assert.deepEqual(success('get', '/v1/orders/{id}', '200'), { $ref: '#/components/schemas/Order' });
  assert.deepEqual(success('get', '/v1/orders/{id}', '404'), { $ref: '#/components/schemas/Error' });

  // A null that the service sends is allowed by the schema, enums included.
  const order = doc.components.schemas.Order as { properties: Record<string, { type: unknown; enum?: unknown[] }> };
  assert.ok(order.properties.failure_reason?.enum?.includes(null));
  assert.ok(order.properties.cancel_reason?.enum?.includes(null));
  const status = doc.components.schemas.AttestationStatus as { properties: Record<string, { enum?: unknown[] }> };
  assert.ok(status.properties.reason?.enum?.includes(null));

  // The days the specification types as dates (the snapshot's path parameter first) say so.
  for (const path of ['/v1/audit/snapshots/{date}', '/v1/audit/snapshots/{date}/proofs/{order_id}']) {
    const parameter = ((doc.paths[path]?.get as Operation).parameters as Array<{ name?: string; schema?: { format?: string } }>).find(
      (p) => p.name === 'date',
    );
    assert.equal(parameter?.schema?.format, 'date', `${path}: date`);
  }
  const formatOf = (schema: string, member: string) =>
    (doc.components.schemas[schema] as { properties: Record<string, { format?: string; anyOf?: Array<{ format?: string }> }> }).properties[
      member
    ];
  for (const [schema, member] of [
    ['Fill', 'settlement_date'],
    ['ContractNote', 'trade_date'],
    ['ContractNote', 'settlement_date'],
    ['FeeScheduleUsed', 'effective_from'],
    ['AuditSnapshot', 'date'],
    ['SgiPartner', 'approved_since'],
  ] as const)
    assert.equal(formatOf(schema, member)?.format, 'date', `${schema}.${member}`);
  assert.ok(JSON.stringify(formatOf('Order', 'expire_date')).includes('"format":"date"'), 'Order.expire_date');

  // Every page size is the specification's: 1 to 200, 50 by default.
  for (const { path, method, op } of operations) {
    const limit = (op.parameters as Array<{ in?: string; name?: string; schema?: unknown }> | undefined)?.find(
      (p) => p.in === 'query' && p.name === 'limit',
    );
    if (limit !== undefined)
      assert.deepEqual(limit.schema, { minimum: 1, maximum: 200, default: 50, type: 'integer' }, `${method.toUpperCase()} ${path}: limit`);
  }

  // Idempotency-Key: required, a UUID, on every mutating POST but the token exchange.
  assert.deepEqual(doc.components.parameters?.IdempotencyKey, {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description: (doc.components.parameters?.IdempotencyKey as { description: string }).description,
    schema: { type: 'string', format: 'uuid' },
  });
  for (const { path, method, op } of operations) {
    const takesKey = (op.parameters ?? []).some((p) => p.$ref === '#/components/parameters/IdempotencyKey');
    if (method === 'post' && path !== '/v1/auth/token') assert.ok(takesKey, `${method.toUpperCase()} ${path} takes an Idempotency-Key`);
    // Every response names its X-Request-Id; every API response its rate-limit headers.
    for (const [code, response] of Object.entries(op.responses)) {
      assert.ok(response.headers?.['X-Request-Id'] !== undefined, `${method.toUpperCase()} ${path} ${code}: X-Request-Id`);
      if (path.startsWith('/v1/'))
        assert.ok(
          response.headers?.['X-RateLimit-Remaining'] !== undefined,
          `${method.toUpperCase()} ${path} ${code}: X-RateLimit-Remaining`,
        );
    }
    if (takesKey)
      assert.ok(op.responses['409']?.headers?.['Retry-After'] !== undefined, `${method.toUpperCase()} ${path} 409: Retry-After`);
  }
  assert.ok((doc.paths['/v1/orders']?.post as Operation).responses['201']?.headers?.['Idempotent-Replayed'] !== undefined);
  // A listing's cursors are on every page (empty at the end, or on the first page for the previous one).
  const cursor = (path: string, name: string) =>
    ((doc.paths[path]?.get as Operation).responses['200']?.headers?.[name] as { required?: boolean } | undefined)?.required;
  assert.equal(cursor('/v1/orders', 'X-Cursor-Next'), true);
  assert.equal(cursor('/v1/orders', 'X-Cursor-Prev'), true);
  assert.equal(cursor('/v1/sgi/partners', 'X-Cursor-Next'), true);
  assert.ok((doc.paths['/v1/orders']?.post as Operation).responses['429']?.headers?.['Retry-After'] !== undefined);

  const docs = await fetch(`${base}/docs/`);
  assert.equal(docs.status, 200);
  const html = await docs.text();
  assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/, 'documentation UI loads nothing from the internet');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { registeredRoutes } from '../../src/http/app.js';

test('the OpenAPI 3.1 document is valid and describes every route the server registers', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const res = await fetch(`${base}/v1/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, Record<string, unknown>> };
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.4.0');

  const validator = new Validator();
  const result = await validator.validate(doc as unknown as Parameters<Validator["validate"]>[0]);
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
  for (const d of ['GET /v1/sgi/partners', 'GET /v1/sgi/partners/{id}', 'GET /v1/instruments', 'GET /v1/instruments/{code}']) assert.ok(described.has(d), d);

  // Bodies that may be left out are documented so (the generator marks every body required).
  const bodyOf = (path: string) => (doc.paths[path]?.post as { requestBody?: { required?: boolean } }).requestBody;
  assert.equal(bodyOf('/v1/kyc/attestations/{id}/revoke')?.required, false);
  assert.equal(bodyOf('/v1/auth/rotate-secret')?.required, false);
  assert.equal(bodyOf('/v1/kyc/attestations')?.required, true);

  const docs = await fetch(`${base}/docs/`);
  assert.equal(docs.status, 200);
  const html = await docs.text();
  assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/, 'documentation UI loads nothing from the internet');
});


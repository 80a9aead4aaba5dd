import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient } from '../support/api.js';

type Json = Record<string, any>;

const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** The specification's error body, with exactly one detail: the body's nesting. */
function assertDepthRefusal(res: Response, body: Json, depth: number): void {
  assert.equal(res.status, 422);
  assert.equal(body.code, 'validation_error');
  assert.match(body.message, /nests/);
  assert.match(body.request_id, /^req_/);
  assert.equal(body.request_id, res.headers.get('x-request-id'));
  assert.deepEqual(
    body.details.map((d: Json) => [d.field, d.rule, d.value]),
    [['body', 'maxDepth', depth]],
  );
}

// Bodies built to exhaust a recursive walk (thousands of levels fit in 64 KiB) are refused by the
// body parser, with the error body, before validation, authentication of the body or any storage.
for (const database of DATABASES) {
  describe(`deeply nested bodies on ${database.name}`, () => {
    test('the token endpoint (no token needed) answers 422 with the error body and the OAuth member', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const post = (body: string, type = 'application/json') =>
        fetch(`${base}/v1/auth/token`, { method: 'POST', headers: { 'content-type': type }, body });
      for (const [text, depth] of [
        [nestedArrays(5000), 5000],
        [`{"grant_type":"client_credentials","scope":${nestedObjects(5000)}}`, 5001],
      ] as const) {
        const res = await post(text);
        const body = (await res.json()) as Json;
        assertDepthRefusal(res, body, depth);
        assert.equal(body.error, 'invalid_request');
      }
      // Form bodies are flat (name=value pairs): bracketed names nest nothing and are unknown parameters.
      const form = await post(
        `grant_type=client_credentials&${'a'}${'[x]'.repeat(5000)}=1&client_id=cli_x&client_secret=sk_test_x`,
        'application/x-www-form-urlencoded',
      );
      assert.equal(form.status, 401, 'an ordinary bad-credentials answer');
      assert.equal(((await form.json()) as Json).error, 'invalid_client');
      const repeated = await post(`${'grant_type=client_credentials&'.repeat(2)}`, 'application/x-www-form-urlencoded');
      assert.equal(repeated.status, 422);
      // Still served normally afterwards.
      const empty = await post('');
      assert.equal(empty.status, 422);
      assert.deepEqual(
        ((await empty.json()) as Json).details.map((d: Json) => [d.field, d.rule]),
        [['body', 'required']],
      );
    });

    test('an order whose client_metadata nests 5,000 levels gets 422 and stores nothing; its own limit of 5 still applies', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['orders:write', 'orders:read']);
      const order = { rcpt_to: 'sgi_x', kyc_attestation_id: 'att_x', instrument: 'KOLA.BRVM', side: 'buy', qty: 1 };
      const text = `${JSON.stringify(order).slice(0, -1)},"client_metadata":${nestedObjects(5000)}}`;
      const res = await api.call('POST', '/v1/orders', text, { 'idempotency-key': randomUUID() });
      assertDepthRefusal(res, (await res.json()) as Json, 5001);

      const six = await api.post('/v1/orders', { ...order, client_metadata: JSON.parse(nestedObjects(6)) });
      assert.equal(six.status, 422);
      assert.ok(
        ((await six.json()) as Json).details.some((d: Json) => d.field === 'client_metadata' && d.rule === 'maxDepth' && d.value === 6),
      );
      assert.equal((await runtime.storage.db.selectFrom('orders').select('id').execute()).length, 0, 'nothing stored');
      assert.equal((await runtime.storage.db.selectFrom('idempotency_keys').select('key').execute()).length, 0, 'no idempotency record');
    });
  });
}

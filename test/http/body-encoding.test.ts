import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient } from '../support/api.js';

type Json = Record<string, any>;

/** `{"url":"https://hooks.example/<bytes>", ...}` with raw bytes spliced into the URL's path. */
function endpointBody(pathBytes: number[]): Buffer {
  return Buffer.concat([
    Buffer.from('{"url":"https://hooks.example/'),
    Buffer.from(pathBytes),
    Buffer.from('","events":["webhook.test"],"description":"'),
    Buffer.from(pathBytes),
    Buffer.from('"}'),
  ]);
}

// JSON text is UTF-8 (RFC 8259 §8.1): bytes that are not are refused, never decoded to U+FFFD and
// stored as text the client did not send.
for (const database of DATABASES) {
  describe(`request bodies that are not UTF-8 on ${database.name}`, () => {
    test('422 rule json with the error body; nothing stored; valid UTF-8 is kept as sent', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['webhooks:manage']);
      const post = (body: Buffer) =>
        fetch(`${base}/v1/webhooks/endpoints`, {
          method: 'POST',
          headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body,
        });
      // A lone continuation byte, an invalid lead byte, a truncated sequence, an overlong '/', an encoded surrogate.
      for (const bad of [[0x80], [0xff, 0xfe], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
        const res = await post(endpointBody(bad));
        const body = (await res.json()) as Json;
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.equal(body.code, 'validation_error');
        assert.deepEqual(body.details, [{ field: 'body', rule: 'json', value: null }]);
        assert.match(body.message, /not UTF-8/);
        assert.equal(body.request_id, res.headers.get('x-request-id'));
      }
      assert.equal((await runtime.storage.db.selectFrom('webhook_endpoints').select('id').execute()).length, 0, 'nothing stored');
      assert.equal((await runtime.storage.db.selectFrom('idempotency_keys').select('key').execute()).length, 0, 'no idempotency record');

      // "Café ✓" and a character outside the BMP, in UTF-8: accepted and echoed as sent.
      const good = [...Buffer.from('caf\u00e9-\u2713-\u{1f600}')];
      const res = await post(endpointBody(good));
      const created = (await res.json()) as Json;
      assert.equal(res.status, 201, JSON.stringify(created));
      assert.equal(created.description, 'caf\u00e9-\u2713-\u{1f600}');
      assert.equal(created.url, 'https://hooks.example/caf\u00e9-\u2713-\u{1f600}');
    });

    test('the token endpoint refuses such a body the same way, with the OAuth member', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const res = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from('{"grant_type":"client_credentials","client_id":"cli_'), Buffer.from([0xff]), Buffer.from('"}')]),
      });
      const body = (await res.json()) as Json;
      assert.equal(res.status, 422);
      assert.equal(body.error, 'invalid_request');
      assert.deepEqual(body.details, [{ field: 'body', rule: 'json', value: null }]);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';

type Json = Record<string, any>;
const BAOBAB = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id ?? '';

for (const database of DATABASES) {
  describe(`text holding U+0000 on ${database.name}`, () => {
    test('a request whose text holds U+0000 is 422 nul_character naming the field, on every retry; the key stays free and nothing changes', async (t) => {
      const e = testEnvironment(t, database, { CAURI_WORKERS: 'none' });
      const runtime = await startRuntimeIn(t, e);
      const api = await apiClient(runtime, await listen(runtime));
      const attestation = ((await (await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'n-1' })).json()) as Json)
        .id as string;
      const order = { rcpt_to: BAOBAB, kyc_attestation_id: attestation, instrument: 'KOLA.BRVM', side: 'buy', qty: 2 };
      const cases: [string, Json, string][] = [
        [
          '/v1/webhooks/endpoints',
          { url: 'https://hooks.example.com/cauri', events: ['order.created'], description: 'Back\u0000office' },
          'description',
        ],
        ['/v1/test-clocks', { frozen_time: new Date().toISOString(), name: 'clock\u0000one' }, 'name'],
        ['/v1/orders', { ...order, client_metadata: { note: 'a\u0000b' } }, 'client_metadata.note'],
        ['/v1/orders', { ...order, client_metadata: { 'a\u0000': 1 } }, 'client_metadata.a\u0000'],
      ];
      for (const [path, body, field] of cases) {
        const key = randomUUID();
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await api.post(path, body, key);
          const error = (await res.json()) as Json;
          assert.equal(res.status, 422, `${path} ${field}: ${JSON.stringify(error)}`);
          assert.equal(error.code, 'validation_error');
          assert.equal(typeof error.request_id, 'string');
          assert.deepEqual(
            { field: error.details[0].field, rule: error.details[0].rule },
            { field, rule: 'nul_character' },
            `${path} ${field}`,
          );
        }
        // Nothing was stored under the key: the corrected request takes it.
        const fixed = JSON.parse(JSON.stringify(body).replaceAll('\\u0000', ' ')) as Json;
        const ok = await api.post(path, fixed, key);
        assert.equal(ok.status, 201, await ok.text());
      }

      const endpoint = (await (
        await api.post('/v1/webhooks/endpoints', {
          url: 'https://hooks.example.com/b',
          events: ['order.created'],
          description: 'Back office',
        })
      ).json()) as Json;
      const patched = await api.call('PATCH', `/v1/webhooks/endpoints/${endpoint.id}`, { description: 'Back\u0000office' });
      assert.equal(patched.status, 422);
      assert.equal(((await patched.json()) as Json).details[0].rule, 'nul_character');
      assert.equal(((await (await api.call('GET', `/v1/webhooks/endpoints/${endpoint.id}`)).json()) as Json).description, 'Back office');
    });

    test('an instrument code holding U+0000 is an unknown instrument (404), not a failure', async (t) => {
      const e = testEnvironment(t, database, { CAURI_WORKERS: 'none' });
      const runtime = await startRuntimeIn(t, e);
      const base = await listen(runtime);
      for (const code of ['KOLA%00.BRVM', 'A%00', 'kola.brvm']) {
        const res = await fetch(`${base}/v1/instruments/${code}`);
        const body = (await res.json()) as Json;
        assert.equal(res.status, 404, `${code}: ${JSON.stringify(body)}`);
        assert.equal(body.code, 'not_found');
      }
      assert.equal((await fetch(`${base}/v1/instruments/KOLA.BRVM`)).status, 200);
    });
  });
}

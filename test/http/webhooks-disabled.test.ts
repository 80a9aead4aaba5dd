import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, listen, startRuntime, type DatabaseCase } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/api.js';

type Json = Record<string, any>;

// Loopback receivers are allowed in the sandbox; nothing is sent, since no worker runs here.
const HOOKS = 'http://127.0.0.1:9/hooks';

async function setup(t: TestContext, database: DatabaseCase): Promise<ApiClient> {
  const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
  return apiClient(runtime, await listen(runtime));
}

async function endpoint(api: ApiClient, path: string, disabled: boolean): Promise<string> {
  const created = (await (await api.post('/v1/webhooks/endpoints', { url: `${HOOKS}/${path}`, events: ['webhook.test'] })).json()) as Json;
  if (disabled) assert.equal((await api.call('PATCH', `/v1/webhooks/endpoints/${created.id}`, { disabled: true })).status, 200);
  return created.id as string;
}

for (const database of DATABASES) {
  describe(`a disabled webhook endpoint gets no new deliveries, on ${database.name}`, () => {
    test('a test event or a resend naming it is 409, and a resend to the subscribers passes it by', async (t) => {
      const api = await setup(t, database);
      const on = await endpoint(api, 'on', false);
      const off = await endpoint(api, 'off', true);

      const key = randomUUID();
      const refusedTest = await api.post(`/v1/webhooks/endpoints/${off}/test`, {}, key);
      assert.equal(refusedTest.status, 409);
      const refusedBody = (await refusedTest.json()) as Json;
      assert.equal(refusedBody.code, 'conflict');
      assert.match(refusedBody.message, new RegExp(`${off} is disabled`));
      const offDeliveries = (await (await api.call('GET', `/v1/webhooks/deliveries?endpoint_id=${off}`)).json()) as Json;
      assert.deepEqual(offDeliveries.data, [], 'the refused test made no delivery');

      // An endpoint's test event is never fanned out, so it can be resent at once.
      const sent = (await (await api.post(`/v1/webhooks/endpoints/${on}/test`, {})).json()) as Json;
      const eventId = sent.event.id as string;

      const toSubscribers = await api.post(`/v1/events/${eventId}/resend`, {});
      assert.equal(toSubscribers.status, 202, await toSubscribers.clone().text());
      const targets = ((await toSubscribers.json()) as Json).deliveries.map((d: Json) => d.endpoint_id);
      assert.deepEqual(targets, [on]);

      const named = await api.post(`/v1/events/${eventId}/resend`, { endpoint_id: off });
      assert.equal(named.status, 409);
      assert.equal(((await named.json()) as Json).code, 'conflict');

      // With the only subscriber disabled, nothing subscribes: 409 as when no endpoint does.
      assert.equal((await api.call('PATCH', `/v1/webhooks/endpoints/${on}`, { disabled: true })).status, 200);
      const none = await api.post(`/v1/events/${eventId}/resend`, {});
      assert.equal(none.status, 409);
      assert.match(((await none.json()) as Json).message, /No enabled webhook endpoint subscribes to webhook\.test/);

      // Enabled again, it takes tests as before; the refusal was not kept for its Idempotency-Key.
      assert.equal((await api.call('PATCH', `/v1/webhooks/endpoints/${off}`, { disabled: false })).status, 200);
      assert.equal((await api.post(`/v1/webhooks/endpoints/${off}/test`, {}, key)).status, 202);
    });
  });
}

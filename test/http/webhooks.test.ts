import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, listen, startRuntime, type DatabaseCase } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/api.js';
import type { Runtime } from '../../src/app.js';

type Json = Record<string, any>;
const URL_OK = 'https://hooks.example.com/cauri';

async function setup(t: TestContext, database: DatabaseCase): Promise<{ runtime: Runtime; base: string; api: ApiClient }> {
  const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  return { runtime, base, api: await apiClient(runtime, base) };
}

async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

function detail(body: Json): [string, string] {
  return [body.details?.[0]?.field, body.details?.[0]?.rule];
}

for (const database of DATABASES) {
  describe(`webhook endpoints API on ${database.name}`, () => {
    test('create shows the secret once; read, list, update and delete never show it', async (t) => {
      const { api } = await setup(t, database);
      const key = randomUUID();
      const res = await api.post(
        '/v1/webhooks/endpoints',
        { url: URL_OK, events: ['order.created', 'kyc.revoked'], description: 'Back office' },
        key,
      );
      assert.equal(res.status, 201);
      const created = await json(res);
      assert.deepEqual(Object.keys(created).sort(), [
        'created_at',
        'description',
        'disabled',
        'events',
        'id',
        'secret',
        'updated_at',
        'url',
      ]);
      assert.match(created.id, /^we_[0-9a-hjkmnp-tv-z]{26}$/);
      assert.match(created.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.equal(created.url, URL_OK);
      assert.deepEqual(created.events, ['order.created', 'kyc.revoked']);
      assert.equal(created.disabled, false);
      assert.match(created.created_at, /\.\d{3}Z$/);

      // The same key and body: the first response again, nothing new.
      const replay = await api.post(
        '/v1/webhooks/endpoints',
        { url: URL_OK, events: ['order.created', 'kyc.revoked'], description: 'Back office' },
        key,
      );
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await json(replay), created);

      const read = await json(await api.call('GET', `/v1/webhooks/endpoints/${created.id}`));
      const { secret: _secret, ...withoutSecret } = created;
      assert.deepEqual(read, withoutSecret);

      const noDescription = await json(await api.post('/v1/webhooks/endpoints', { url: URL_OK, events: ['webhook.test'] }));
      assert.equal('description' in noDescription, false);

      const list = await api.call('GET', '/v1/webhooks/endpoints?limit=1');
      assert.equal(list.status, 200);
      const page1 = await json(list);
      assert.deepEqual(
        page1.data.map((e: Json) => e.id),
        [noDescription.id],
      );
      assert.equal(list.headers.get('x-cursor-prev'), '');
      const next = list.headers.get('x-cursor-next') as string;
      assert.notEqual(next, '');
      const list2 = await api.call('GET', `/v1/webhooks/endpoints?limit=1&cursor=${encodeURIComponent(next)}`);
      assert.deepEqual(
        (await json(list2)).data.map((e: Json) => e.id),
        [created.id],
      );
      assert.equal(list2.headers.get('x-cursor-next'), '');
      assert.equal((await api.call('GET', '/v1/webhooks/endpoints?cursor=forged')).status, 422);

      const patched = await api.call('PATCH', `/v1/webhooks/endpoints/${created.id}`, {
        url: 'https://other.example.com/x',
        events: ['order.failed'],
        description: null,
        disabled: true,
      });
      assert.equal(patched.status, 200);
      const updated = await json(patched);
      assert.equal(updated.url, 'https://other.example.com/x');
      assert.deepEqual(updated.events, ['order.failed']);
      assert.equal(updated.disabled, true);
      assert.equal('description' in updated, false);
      assert.equal('secret' in updated, false);
      assert.equal((await api.call('PATCH', `/v1/webhooks/endpoints/${created.id}`, {})).status, 422);
      assert.equal((await api.call('PATCH', `/v1/webhooks/endpoints/${created.id}`, { url: 'ftp://x.example.com/' })).status, 422);

      const deleted = await api.call('DELETE', `/v1/webhooks/endpoints/${created.id}`);
      assert.equal(deleted.status, 204);
      assert.equal(await deleted.text(), '');
      assert.equal((await api.call('GET', `/v1/webhooks/endpoints/${created.id}`)).status, 404);
      assert.equal((await api.call('DELETE', `/v1/webhooks/endpoints/${created.id}`)).status, 404);
    });

    test('bad input: url not absolute, not http(s), too long; empty or unknown event types; a 17th endpoint', async (t) => {
      const { api } = await setup(t, database);
      const cases: [unknown, string, string][] = [
        [{ url: '/relative/path', events: ['order.created'] }, 'url', 'format'],
        [{ url: 'hooks.example.com', events: ['order.created'] }, 'url', 'format'],
        [{ url: 'ftp://hooks.example.com/', events: ['order.created'] }, 'url', 'scheme'],
        [{ url: `https://hooks.example.com/${'a'.repeat(2048)}`, events: ['order.created'] }, 'url', 'max_length'],
        [{ url: 'https://user:pw@hooks.example.com/', events: ['order.created'] }, 'url', 'credentials'],
        [{ url: URL_OK, events: [] }, 'events', 'minItems'],
        [{ url: URL_OK, events: [''] }, 'events.0', 'enum'],
        [{ url: URL_OK, events: ['order.deleted'] }, 'events.0', 'enum'],
        [{ url: URL_OK, events: ['order.created', 'order.created'] }, 'events', 'uniqueItems'],
        [{ url: URL_OK }, 'events', 'required'],
        [{ url: URL_OK, events: ['order.created'], secret: 'mine' }, 'secret', 'additionalProperties'],
      ];
      for (const [body, field, rule] of cases) {
        const res = await api.post('/v1/webhooks/endpoints', body);
        assert.equal(res.status, 422, JSON.stringify(body).slice(0, 80));
        const error = await json(res);
        assert.equal(error.code, 'validation_error');
        assert.deepEqual(detail(error), [field, rule], JSON.stringify(body).slice(0, 80));
      }
      assert.deepEqual(detail(await json(await api.call('POST', '/v1/webhooks/endpoints', { url: URL_OK, events: ['order.created'] }))), [
        'Idempotency-Key',
        'required',
      ]);

      for (let i = 0; i < 16; i++)
        assert.equal((await api.post('/v1/webhooks/endpoints', { url: `${URL_OK}/${i}`, events: ['order.created'] })).status, 201);
      const seventeenth = await api.post('/v1/webhooks/endpoints', { url: URL_OK, events: ['order.created'] });
      assert.equal(seventeenth.status, 422);
      assert.equal(detail(await json(seventeenth))[1], 'max_endpoints');
    });

    test("another client's endpoint, delivery and event are 404; a missing scope is 403", async (t) => {
      const { runtime, base, api } = await setup(t, database);
      const mine = await json(await api.post('/v1/webhooks/endpoints', { url: URL_OK, events: ['order.created'] }));
      const test1 = await json(await api.post(`/v1/webhooks/endpoints/${mine.id}/test`, {}));
      const other = await apiClient(runtime, base, undefined, 'other');
      assert.equal((await other.call('GET', `/v1/webhooks/endpoints/${mine.id}`)).status, 404);
      assert.equal((await other.call('PATCH', `/v1/webhooks/endpoints/${mine.id}`, { disabled: true })).status, 404);
      assert.equal((await other.call('DELETE', `/v1/webhooks/endpoints/${mine.id}`)).status, 404);
      assert.equal((await other.post(`/v1/webhooks/endpoints/${mine.id}/rotate-secret`, {})).status, 404);
      assert.equal((await other.post(`/v1/webhooks/endpoints/${mine.id}/test`, {})).status, 404);
      assert.equal((await other.post(`/v1/webhooks/endpoints/${mine.id}/replay-dead`, {})).status, 404);
      assert.equal((await other.call('GET', `/v1/webhooks/deliveries/${test1.delivery.id}`)).status, 404);
      assert.equal((await other.post(`/v1/webhooks/deliveries/${test1.delivery.id}/replay`, {})).status, 404);
      assert.equal((await other.call('GET', `/v1/events/${test1.event.id}`)).status, 404);
      assert.deepEqual((await json(await other.call('GET', '/v1/webhooks/deliveries'))).data, []);
      assert.equal((await api.call('GET', '/v1/webhooks/endpoints/we_nonsense')).status, 404);
      // Unchanged for its owner.
      assert.equal((await json(await api.call('GET', `/v1/webhooks/endpoints/${mine.id}`))).disabled, false);

      const narrow = await apiClient(runtime, base, ['orders:read'], 'narrow');
      const forbidden = await narrow.call('GET', '/v1/webhooks/endpoints');
      assert.equal(forbidden.status, 403);
      assert.equal((await json(forbidden)).message, 'Missing scope: webhooks:manage');
    });

    test('test events: any type, default webhook.test, unknown type 422; stored and listed by GET /v1/events', async (t) => {
      const { api } = await setup(t, database);
      const ep = await json(await api.post('/v1/webhooks/endpoints', { url: URL_OK, events: ['order.created'] }));
      const unknown = await api.post(`/v1/webhooks/endpoints/${ep.id}/test`, { type: 'order.teleported' });
      assert.equal(unknown.status, 422);
      assert.deepEqual(detail(await json(unknown)), ['type', 'enum']);
      assert.deepEqual(detail(await json(await api.post(`/v1/webhooks/endpoints/${ep.id}/test`, { livemode: 'yes' }))), [
        'livemode',
        'type',
      ]);

      const key = randomUUID();
      const first = await api.post(`/v1/webhooks/endpoints/${ep.id}/test`, undefined, key);
      assert.equal(first.status, 202);
      const sample = await json(first);
      assert.equal(sample.event.type, 'webhook.test');
      assert.equal(sample.event.livemode, false, 'sandbox default');
      assert.equal(sample.event.data.endpoint_id, ep.id);
      assert.equal(sample.delivery.status, 'pending');
      assert.equal(sample.delivery.endpoint_id, ep.id);
      assert.deepEqual(
        await json(await api.post(`/v1/webhooks/endpoints/${ep.id}/test`, undefined, key)),
        sample,
        'idempotent: no second event',
      );

      const kinds = [
        'order.created',
        'order.routed',
        'order.executed',
        'order.failed',
        'order.cancelled',
        'order.amended',
        'order.request_refused',
        'position.break',
        'kyc.attested',
        'kyc.revoked',
        'audit.snapshot',
      ];
      for (const type of kinds) {
        const res = await api.post(`/v1/webhooks/endpoints/${ep.id}/test`, { type, livemode: true });
        assert.equal(res.status, 202, type);
        assert.equal((await json(res)).event.livemode, true);
      }

      const all = await api.call('GET', '/v1/events?limit=3');
      const page = await json(all);
      assert.deepEqual(
        page.data.map((e: Json) => e.type),
        ['audit.snapshot', 'kyc.revoked', 'kyc.attested'],
        'newest first',
      );
      const older = await json(
        await api.call('GET', `/v1/events?limit=200&cursor=${encodeURIComponent(all.headers.get('x-cursor-next') as string)}`),
      );
      assert.equal(older.data.length, kinds.length - 3 + 1, 'the other samples and the first test event');
      const filtered = await json(await api.call('GET', '/v1/events?type=webhook.test'));
      assert.deepEqual(
        filtered.data.map((e: Json) => e.id),
        [sample.event.id],
      );
      const one = await json(await api.call('GET', `/v1/events/${sample.event.id}`));
      assert.deepEqual(one, sample.event);
      assert.equal((await api.call('GET', '/v1/events?type=nope')).status, 422);

      // Deliveries list and filter.
      const deliveries = await json(await api.call('GET', `/v1/webhooks/deliveries?endpoint_id=${ep.id}&status=pending&limit=200`));
      assert.equal(deliveries.data.length, kinds.length + 1);
      assert.equal(
        (await json(await api.call('GET', `/v1/webhooks/deliveries?event_id=${sample.event.id}`))).data[0].id,
        sample.delivery.id,
      );
      // Not dead: replaying is a conflict.
      const conflict = await api.post(`/v1/webhooks/deliveries/${sample.delivery.id}/replay`, undefined);
      assert.equal(conflict.status, 409);
      assert.equal((await json(conflict)).code, 'conflict');
    });
  });
}

test('a sandbox configured with CAURI_WEBHOOKS_ALLOW_PRIVATE=false refuses loopback receivers', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WEBHOOKS_ALLOW_PRIVATE: 'false' });
  const api = await apiClient(runtime, await listen(runtime));
  const res = await api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['order.created'] });
  assert.equal(res.status, 422);
  const body = (await res.json()) as { details: { field: string; rule: string }[] };
  assert.deepEqual(
    body.details.map((d) => [d.field, d.rule]),
    [['url', 'private_address']],
  );
  const allowed = await startRuntime(t, DATABASES[0]!);
  const api2 = await apiClient(allowed, await listen(allowed));
  assert.equal(
    (await api2.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['order.created'] })).status,
    201,
    'the default sandbox allows them',
  );
});

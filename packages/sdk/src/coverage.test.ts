import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriApiError } from './errors.js';
import type { CauriClient } from './client.js';
import { calls, setup, trace } from './testing/client-setup.js';
import { service } from './testing/service.js';
import type { WebhookEvent } from './types.js';

const svc = await service();
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const UNKNOWN = 'zz_01kdvdna00zzzzzzzzzzzzzz';

/** One call of every method of the client; what they answer does not matter here, only what they ask. */
async function callEverything(client: CauriClient, partner: string): Promise<void> {
  const attempts: (() => Promise<unknown>)[] = [
    () => client.service.openapi(),
    () => client.service.health(),
    () => client.service.readiness(),
    () => client.service.metrics(),
    () => client.auth.token(),
    () => client.auth.keys(),
    () => client.auth.metadata(),
    () => client.auth.rotateSecret(),
    () => client.partners.list({ limit: 1 }).toArray(),
    () => client.partners.get(partner),
    () => client.instruments.list({ exchange: 'GSE' }).toArray(),
    () => client.instruments.get('KOLA.BRVM'),
    () => client.exchanges.list(),
    () => client.exchanges.calendar('BRVM', { from: '2026-01-05', to: '2026-01-06' }),
    () => client.exchanges.clock('BRVM'),
    () => client.attestations.create({ subject_id: 'x', level: 'KYC1', jurisdictions: ['UEMOA'], verifications: [] }),
    () => client.attestations.get(UNKNOWN),
    () => client.attestations.status(UNKNOWN),
    () => client.attestations.revoke(UNKNOWN),
    () => client.attestations.crl(),
    () => client.attestations.keyDocument(),
    () => client.orders.create({ rcpt_to: partner, kyc_attestation_id: UNKNOWN, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 }),
    () => client.orders.get(UNKNOWN),
    () => client.orders.list().toArray(),
    () => client.orders.cancel(UNKNOWN),
    () => client.orders.amend(UNKNOWN, { qty: 2 }),
    () => client.orders.fills(UNKNOWN),
    () => client.orders.contractNote(UNKNOWN),
    () => client.accounts.set('inv-1', partner, 'A-1'),
    () => client.accounts.get('inv-1', partner),
    () => client.accounts.list('inv-1').toArray(),
    () => client.accounts.remove('inv-1', partner),
    () => client.positions.list().toArray(),
    () => client.positions.statements.create({ subject_id: 'inv-1', rcpt_to: partner, as_of: '2026-01-05', holdings: [] }),
    () => client.positions.statements.get(UNKNOWN),
    () => client.positions.statements.list().toArray(),
    () => client.testClocks.create({ frozen_time: '2026-01-05T10:00:00Z' }),
    () => client.testClocks.get(UNKNOWN),
    () => client.testClocks.list().toArray(),
    () => client.testClocks.advance(UNKNOWN, '2026-01-06T10:00:00Z'),
    () => client.testClocks.delete(UNKNOWN),
    () => client.audit.snapshot('2026-01-05'),
    () => client.audit.proof('2026-01-05', UNKNOWN),
    () => client.operator.fixSessions(),
    () => client.webhooks.endpoints.create({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'] }),
    () => client.webhooks.endpoints.list().toArray(),
    () => client.webhooks.endpoints.get(UNKNOWN),
    () => client.webhooks.endpoints.update(UNKNOWN, { disabled: true }),
    () => client.webhooks.endpoints.delete(UNKNOWN),
    () => client.webhooks.endpoints.rotateSecret(UNKNOWN),
    () => client.webhooks.endpoints.test(UNKNOWN),
    () => client.webhooks.endpoints.replayDead(UNKNOWN),
    () => client.webhooks.deliveries.list().toArray(),
    () => client.webhooks.deliveries.get(UNKNOWN),
    () => client.webhooks.deliveries.replay(UNKNOWN),
    () => client.events.list().toArray(),
    () => client.events.get(UNKNOWN),
    () => client.events.test({ type: 'webhook.test' }),
    () => client.events.resend(UNKNOWN),
    async () => {
      // The stream opens, then the caller stops it: the iteration ends normally.
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 1000);
      for await (const _ of client.events.stream({ signal: stop.signal })) break;
    },
  ];
  for (const attempt of attempts) {
    await attempt().catch((error: unknown) => {
      if (!(error instanceof CauriApiError)) throw error;
    });
  }
}

for (const db of svc.DATABASES) {
  describe(`the SDK covers the served OpenAPI document (${db.name}, loopback HTTP)`, () => {
    test('every operation of GET /v1/openapi.json is reached by a method of the client', async (t) => {
      const c = await setup(t, {}, db);
      const document = (await (await fetch(`${c.baseUrl}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.entries(document.paths).flatMap(([path, item]) =>
        METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`),
      );
      assert.ok(operations.length >= 60, `${operations.length} operations`);
      // A static path wins over a template with a parameter in the same place (/v1/events/stream, /v1/events/{id}).
      const templates = Object.keys(document.paths)
        .map((path) => ({ path, re: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`), params: path.split('{').length }))
        .sort((a, b) => a.params - b.params);
      await callEverything(c.client({ now: () => c.clock.now().getTime() }), c.baobab);
      const reached = new Set(c.log.map((e) => `${e.method} ${templates.find((x) => x.re.test(e.path))?.path ?? e.path}`));
      assert.deepEqual(
        operations.filter((o) => !reached.has(o)),
        [],
        'operations with no method',
      );
    });

    test('test clocks: the list follows X-Cursor-Next to the last page, like every list', async (t) => {
      const c = await setup(t, {}, db);
      const client = c.client();
      const created: string[] = [];
      for (let i = 0; i < 101; i++) created.push((await client.testClocks.create({ frozen_time: '2026-01-05T10:00:00Z' })).id);
      const listed = await client.testClocks.list().toArray();
      assert.deepEqual(listed.map((clock) => clock.id).sort(), created.sort(), 'all 101, newest first');
      assert.deepEqual(
        calls(c.log, 'GET', '/v1/test-clocks').map((e) => e.query.replace(/cursor=[^&]+/, 'cursor=…')),
        ['', '?cursor=…', '?cursor=…'],
        'three pages of the default 50',
      );
      const pages = [];
      for await (const page of client.testClocks.list({ limit: 200 }).pages()) pages.push(page.data.length);
      assert.deepEqual(pages, [101]);
    });

    test('a rotated secret: the client goes on with the new one, the old one stops at once', async (t) => {
      const c = await setup(t, {}, db);
      const client = c.client({ now: () => c.clock.now().getTime() });
      const rotated = await client.auth.rotateSecret({ expire_previous: 'now' });
      assert.notEqual(rotated.client_secret, c.credentials.clientSecret);
      assert.equal(rotated.client_id, c.credentials.clientId);
      c.clock.advance(901_000); // the token expires: the next call exchanges the secret again
      assert.deepEqual(await client.orders.list().toArray(), []);
      assert.equal(calls(c.log, 'POST', '/v1/auth/token').at(-1)?.status, 200);
      await assert.rejects(
        c
          .client({ now: () => c.clock.now().getTime() })
          .orders.list()
          .toArray(),
        (e: unknown) => e instanceof CauriApiError && e.status === 401 && e.operation === 'POST /v1/auth/token',
      );
      assert.equal((await client.auth.keys()).keys.length > 0, true);
      assert.match((await client.auth.metadata()).token_endpoint, /\/v1\/auth\/token$/);
      assert.deepEqual(await client.service.health(), { status: 'ok' });
      assert.equal((await client.service.readiness()).status, 'ready');
      assert.match(await client.service.metrics(), /^# (HELP|TYPE) /m);
      assert.equal(((await client.service.openapi()) as { info: { version: string } }).info.version, '1.4.0');
    });

    test('the event stream yields each event once, across the reconnection the token expiry forces', async (t) => {
      const c = await setup(t, {}, db);
      const client = c.client({ now: () => c.clock.now().getTime() });
      const stop = new AbortController();
      const stream = client.events.stream({ signal: stop.signal });
      const next = async (): Promise<WebhookEvent> => {
        const pending = stream.next();
        // The service sends an event once it is 2 s old on its clock.
        c.clock.advance(3000);
        const result = await pending;
        assert.equal(result.done, false);
        return result.value as WebhookEvent;
      };
      const first = stream.next();
      const sample = await client.events.test({ type: 'order.created' });
      c.clock.advance(3000);
      assert.deepEqual(((await first).value as WebhookEvent).id, sample.event.id);
      c.clock.advance(900_000); // the access token expires: the service ends the stream
      const second = await client.events.test({ type: 'webhook.test' });
      const got = await next();
      assert.deepEqual([got.id, got.type], [second.event.id, 'webhook.test']);
      const opened = calls(c.log, 'GET', '/v1/events/stream');
      assert.deepEqual(
        opened.map((e) => e.status),
        [200, 200],
      );
      assert.equal(new Set(opened.map((e) => e.authorization)).size, 2, 'reconnected with a new token');
      stop.abort();
      assert.deepEqual(await stream.next(), { done: true, value: undefined });
      assert.ok(trace(c.log).filter((l) => l === 'POST /v1/auth/token 200').length >= 2);
    });

    test('a stored event sent again to the endpoint named', async (t) => {
      const c = await setup(t, { CAURI_WORKERS: 'all' }, db);
      // The service answers 409 with Retry-After while the event is being fanned out: the client waits and retries.
      const client = c.client({ sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), retry: { maxAttempts: 10 } });
      const endpoint = await client.webhooks.endpoints.create({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'] });
      const sample = await client.events.test({ type: 'order.created' });
      c.clock.advance(2000);
      const resent = await client.events.resend(sample.event.id, { endpoint_id: endpoint.id });
      assert.deepEqual([resent.event_id, resent.deliveries.map((d) => d.endpoint_id)], [sample.event.id, [endpoint.id]]);
    });
  });
}

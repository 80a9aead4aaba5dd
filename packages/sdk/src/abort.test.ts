import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriClient } from './client.js';
import { CauriNetworkError } from './errors.js';
import { startProxy } from './testing/proxy.js';
import { service } from './testing/service.js';

// Time-outs and abort signals, over loopback HTTP to the real service through a proxy that can stall
// or hold back an answer, on each database of the harness.
const svc = await service();

async function start(t: Parameters<typeof svc.startRuntime>[0], db: (typeof svc.DATABASES)[number]) {
  const runtime = await svc.startRuntime(t, db, { CAURI_WORKERS: 'none' });
  const base = await svc.listen(runtime);
  const issued = await runtime.services.clients.create('sdk abort');
  return { runtime, base, credentials: { clientId: issued.client_id, clientSecret: issued.client_secret } };
}

const elapsed = async (run: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
  const started = Date.now();
  try {
    await run();
    return { ms: Date.now() - started, error: undefined };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
};

for (const db of svc.DATABASES) {
  describe(`time-outs and abort signals (${db.name})`, () => {
    test('the time-out while a 2xx body arrives is a network error: retried with the same key, one resource created', async (t) => {
      const { base, credentials } = await start(t, db);
      const stalled = (method: string, path: string) => method === 'POST' && path === '/v1/webhooks/endpoints' && stalls-- > 0;
      let stalls = 1;
      const proxy = await startProxy(t, base, (method, path) => (stalled(method, path) ? 'stall-body' : undefined));
      const client = new CauriClient({ baseUrl: proxy.url, ...credentials, timeoutMs: 1000 });
      const created = await client.webhooks.endpoints.create({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'] });
      assert.equal(proxy.log.filter((r) => r.method === 'POST' && r.path === '/v1/webhooks/endpoints').length, 2);
      const direct = new CauriClient({ baseUrl: base, ...credentials });
      assert.deepEqual(
        (await direct.webhooks.endpoints.list().toArray()).map((e) => e.id),
        [created.id],
        'the first attempt created it; the retry was answered from its record',
      );

      // Every attempt stalls: the last failure is a CauriNetworkError carrying the key to retry with.
      stalls = 10;
      const { error } = await elapsed(() =>
        new CauriClient({
          baseUrl: proxy.url,
          ...credentials,
          timeoutMs: 300,
          retry: { maxAttempts: 2, baseDelayMs: 10 },
        }).webhooks.endpoints.create({ url: 'http://127.0.0.1:9/other', events: ['order.created'] }),
      );
      assert.ok(error instanceof CauriNetworkError, String(error));
      assert.match(error.idempotencyKey ?? '', /^[0-9a-f-]{36}$/);
    });

    test('an abort ends the wait for Retry-After, the wait for the token and the reading of a body, at once', async (t) => {
      const { base, credentials } = await start(t, db);
      const busy = {
        status: 503,
        headers: { 'retry-after': '30' },
        body: JSON.stringify({ code: 'service_unavailable', message: 'busy', request_id: 'req_x' }),
      };
      const proxy = await startProxy(t, base, (_m, path) => {
        if (path.startsWith('/v1/sgi/partners/')) return busy;
        if (path === '/v1/auth/token') return 'hang';
        if (path === '/v1/instruments') return 'stall-body';
        return undefined;
      });
      const client = new CauriClient({ baseUrl: proxy.url, ...credentials });
      for (const [what, call] of [
        ['Retry-After: 30', (signal: AbortSignal) => client.partners.get('sgi_x', { signal })],
        ['a token exchange left unanswered', (signal: AbortSignal) => client.orders.get('ord_x', { signal })],
        ['a body that never comes', (signal: AbortSignal) => client.paginate('/v1/instruments', {}, { auth: false, signal }).toArray()],
        ['a page of a list method that never comes', (signal: AbortSignal) => client.instruments.list({}, { signal }).toArray()],
      ] as const) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 200);
        const { ms, error } = await elapsed(() => call(controller.signal));
        assert.equal((error as Error | undefined)?.name, 'AbortError', `${what}: ${String(error)}`);
        assert.ok(ms < 2000, `${what}: aborted after ${ms} ms`);
      }
      // The abort was the caller's: nothing was retried.
      assert.equal(proxy.log.filter((r) => r.path.startsWith('/v1/sgi/partners/')).length, 1);
      assert.equal(proxy.log.filter((r) => r.path === '/v1/instruments').length, 2);
    });

    test('an abort between two pages of a list method ends the iteration: no further page is fetched', async (t) => {
      const { base, credentials } = await start(t, db);
      const proxy = await startProxy(t, base, () => undefined);
      const client = new CauriClient({ baseUrl: proxy.url, ...credentials });
      const controller = new AbortController();
      const seen: string[] = [];
      const { error } = await elapsed(async () => {
        for await (const partner of client.partners.list({ limit: 1 }, { signal: controller.signal })) {
          seen.push(partner.id);
          controller.abort();
        }
      });
      assert.equal((error as Error | undefined)?.name, 'AbortError', String(error));
      assert.equal(seen.length, 1, 'the first page was read whole');
      assert.equal(proxy.log.filter((r) => r.path === '/v1/sgi/partners').length, 1, 'the second page was never asked for');
      const pages = await new CauriClient({ baseUrl: base, ...credentials }).partners.list({ limit: 1 }).toArray();
      assert.ok(pages.length > 1, 'the list has a second page to skip');
    });
  });
}

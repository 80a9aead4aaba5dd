import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriClient } from './client.js';
import { CauriApiError } from './errors.js';
import type { WebhookEvent } from './types.js';
import { startProxy } from './testing/proxy.js';
import { service } from './testing/service.js';

// events.stream() against the real service over loopback HTTP, on each database of the harness.
const svc = await service();

/** Collects what an iteration yields, in the background. */
function follow(stream: AsyncGenerator<WebhookEvent, void, undefined>) {
  const got: string[] = [];
  const done = (async () => {
    for await (const event of stream) got.push(event.id);
  })();
  return {
    got,
    done,
    async until(n: number, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (got.length < n) {
        if (Date.now() > deadline) throw new Error(`${got.length} of ${n} events within ${timeoutMs} ms`);
        await Promise.race([done, new Promise((r) => setTimeout(r, 50))]);
      }
    },
  };
}

for (const db of svc.DATABASES) {
  describe(`events.stream() (${db.name})`, () => {
    test('a restart of the service longer than the retries of one call: the stream waits for it and resumes, no event lost or doubled', async (t) => {
      const environment = svc.testEnvironment(t, db, { CAURI_WORKERS: 'none' });
      const first = await svc.startRuntimeIn(t, environment);
      const base = await svc.listen(first);
      const port = Number(new URL(base).port);
      const issued = await first.services.clients.create('sdk stream');
      const options = { baseUrl: base, ...{ clientId: issued.client_id, clientSecret: issued.client_secret } };
      // Fast waits, so that the call's own four attempts are spent well within the restart.
      const client = new CauriClient({ ...options, retry: { baseDelayMs: 20, maxDelayMs: 200 } });
      const producer = new CauriClient(options);
      const before = (await producer.events.test({})).event.id;
      const ac = new AbortController();
      const stream = follow(client.events.stream({ lastEventId: before, signal: ac.signal }));
      const sent = [(await producer.events.test({ type: 'order.created' })).event.id];
      await stream.until(1);

      await first.close();
      await new Promise((r) => setTimeout(r, 1500));
      const second = await svc.startRuntimeIn(t, environment);
      for (let i = 0; i < 3; i++)
        sent.push((await producer.request('post', '/v1/events/test', { body: {} }).catch(() => null))?.event.id ?? '');
      assert.ok(
        sent.slice(1).every((id) => id === ''),
        'the service is not listening yet',
      );
      sent.length = 1;
      await second.app.listen({ host: '127.0.0.1', port });
      for (let i = 0; i < 3; i++) sent.push((await producer.events.test({ type: 'kyc.attested' })).event.id);
      await stream.until(4);
      ac.abort();
      await stream.done;
      assert.deepEqual(stream.got, sent);
    });

    test('line endings CR and CRLF, a CR and its LF in separate chunks: every event arrives at once, once', async (t) => {
      const runtime = await svc.startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await svc.listen(runtime);
      const issued = await runtime.services.clients.create('sdk stream');
      const credentials = { clientId: issued.client_id, clientSecret: issued.client_secret };
      const producer = new CauriClient({ baseUrl: base, ...credentials });
      const endings: [string, (text: string) => string[]][] = [
        ['CR', (text) => [text.replaceAll('\n', '\r')]],
        ['CRLF split after each CR', (text) => text.replaceAll('\n', '\r\n').split(/(?<=\r)/)],
        ['LF, one character a chunk', (text) => [...text]],
      ];
      for (const [name, transform] of endings) {
        const proxy = await startProxy(t, base, undefined, transform);
        const ac = new AbortController();
        const last = (await producer.events.test({})).event.id;
        const stream = follow(
          new CauriClient({ baseUrl: proxy.url, ...credentials }).events.stream({ lastEventId: last, signal: ac.signal }),
        );
        const sent: string[] = [];
        for (let i = 0; i < 3; i++) sent.push((await producer.events.test({})).event.id);
        // The service sends an event about two seconds after it happens, and a ping only every 15 s.
        await stream.until(3, 8_000);
        ac.abort();
        await stream.done;
        assert.deepEqual(stream.got, sent, name);
        assert.equal(proxy.log.filter((r) => r.path === '/v1/events/stream').length, 1, `${name}: one connection`);
      }
    });

    test('a 503 of the stream is waited out; a 403 is thrown', async (t) => {
      const runtime = await svc.startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await svc.listen(runtime);
      const issued = await runtime.services.clients.create('sdk stream');
      const credentials = { clientId: issued.client_id, clientSecret: issued.client_secret };
      const unavailable = { status: 503, body: JSON.stringify({ code: 'service_unavailable', message: 'starting', request_id: 'req_x' }) };
      // Five 503s in a row: more than one call's four attempts.
      const proxy = await startProxy(t, base, (_m, path) => (path === '/v1/events/stream' && stream503s-- > 0 ? unavailable : undefined));
      let stream503s = 5;
      const producer = new CauriClient({ baseUrl: base, ...credentials });
      const last = (await producer.events.test({})).event.id;
      const ac = new AbortController();
      const client = new CauriClient({ baseUrl: proxy.url, ...credentials, retry: { baseDelayMs: 20, maxDelayMs: 100 } });
      const stream = follow(client.events.stream({ lastEventId: last, signal: ac.signal }));
      const sent = (await producer.events.test({})).event.id;
      await stream.until(1);
      ac.abort();
      await stream.done;
      assert.deepEqual(stream.got, [sent]);
      const attempts = proxy.log.filter((r) => r.path === '/v1/events/stream');
      assert.equal(attempts.length, 6, 'five refused, then one connection');
      assert.ok(
        attempts.every((r) => r.lastEventId === last),
        'every attempt resumes after the same event',
      );

      const readOnly = await runtime.services.clients.create('read only', ['orders:read']);
      const refused = new CauriClient({ baseUrl: base, clientId: readOnly.client_id, clientSecret: readOnly.client_secret });
      await assert.rejects(follow(refused.events.stream()).done, (e: unknown) => e instanceof CauriApiError && e.status === 403);
    });

    test("the server's retry: is the least wait before the next connection", async (t) => {
      const runtime = await svc.startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await svc.listen(runtime);
      const issued = await runtime.services.clients.create('sdk stream');
      // A stream that asks for 1.5 s between connections, then ends at once (twice), then the service's own.
      let short = 2;
      const frame = { status: 200, headers: { 'content-type': 'text/event-stream' }, body: 'retry: 1500\n: bye\n\n' };
      const proxy = await startProxy(t, base, (_m, path) => (path === '/v1/events/stream' && short-- > 0 ? frame : undefined));
      const client = new CauriClient({
        baseUrl: proxy.url,
        clientId: issued.client_id,
        clientSecret: issued.client_secret,
        retry: { baseDelayMs: 10 },
      });
      const ac = new AbortController();
      const stream = follow(client.events.stream({ signal: ac.signal }));
      const started = Date.now();
      while (proxy.log.filter((r) => r.path === '/v1/events/stream').length < 3) await new Promise((r) => setTimeout(r, 20));
      const ms = Date.now() - started;
      ac.abort();
      await stream.done;
      assert.ok(ms >= 3000, `two waits of at least 1.5 s, got ${ms} ms in all`);
    });
  });
}

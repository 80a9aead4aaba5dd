import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseParser, type SseMessage } from '../../src/cli/integrator/sse-parser.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';

type Json = Record<string, any>;

/** An open SSE connection read with the CLI's parser; `next` waits for the next event. */
interface Stream {
  status: number;
  headers: Headers;
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Events received so far. */
  received: SseMessage[];
  comments(): number;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

async function openStream(t: TestContext, base: string, token: string, lastEventId?: string, query = ''): Promise<Stream> {
  const controller = new AbortController();
  t.after(() => controller.abort());
  const res = await fetch(`${base}/v1/events/stream${query}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
    },
    signal: controller.signal,
  });
  const parser = new SseParser();
  const received: SseMessage[] = [];
  const waiters: (() => void)[] = [];
  let read = 0;
  const ended = (async () => {
    if (res.body === null) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        received.push(...parser.push(decoder.decode(chunk, { stream: true })));
        for (const w of waiters.splice(0)) w();
      }
    } catch {
      // Aborted by the test.
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    received,
    ended,
    comments: () => parser.comments,
    close: () => controller.abort(),
    async next(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (read >= received.length) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms (got ${received.length})`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, Math.min(left, 250)))]);
      }
      return received[read++] as SseMessage;
    },
  };
}

let subjects = 0;
async function attest(api: ApiClient): Promise<string> {
  const res = await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: `inv-stream-${++subjects}` });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as Json).id as string;
}

test('GET /v1/events/stream sends new events, then resumes after Last-Event-ID with neither duplicates nor gaps', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const other = await apiClient(runtime, base, undefined, 'other client');

  const stream = await openStream(t, base, api.token);
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(stream.headers.get('x-request-id') ?? '', /^req_/);

  await attest(other); // another client's event: never on this stream
  const first = await attest(api);
  const e1 = await stream.next();
  assert.equal(e1.event, 'kyc.attested');
  const envelope = JSON.parse(e1.data) as Json;
  assert.equal(envelope.data.id, first);
  assert.equal(e1.id, envelope.id);
  assert.deepEqual(Object.keys(envelope), ['id', 'type', 'created_at', 'data', 'livemode']);
  // The data line is the envelope exactly as GET /v1/events/{id} (and a webhook body) has it.
  const stored = await api.call('GET', `/v1/events/${e1.id}`);
  assert.deepEqual(JSON.parse(await stored.text()), envelope);
  stream.close();

  // While disconnected: three more events.
  const missed = [await attest(api), await attest(api), await attest(api)];
  const resumed = await openStream(t, base, api.token, e1.id ?? undefined);
  const got: string[] = [];
  for (let i = 0; i < 3; i++) got.push((JSON.parse((await resumed.next()).data) as Json).data.id as string);
  assert.deepEqual(got, missed);
  // Then it follows: a new event arrives after the replayed ones, and nothing else came in between.
  const later = await attest(api);
  const e5 = await resumed.next();
  assert.equal((JSON.parse(e5.data) as Json).data.id, later);
  assert.equal(resumed.received.length, 4);
  const ids = resumed.received.map((m) => m.id as string);
  assert.deepEqual(ids, [...ids].sort(), 'in id order');
  assert.ok(ids.every((id) => id > (e1.id as string)));

  // The query parameter is the same position for clients that cannot set headers.
  const viaQuery = await openStream(t, base, api.token, undefined, `?last_event_id=${ids[2]}`);
  assert.equal((await viaQuery.next()).id, ids[3]);
});

test('the stream: scope and Last-Event-ID checked, heartbeat comment, and runtime.close() ends open streams promptly', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const kycOnly = await apiClient(runtime, base, ['kyc:read'], 'kyc only');

  assert.equal((await fetch(`${base}/v1/events/stream`)).status, 401);
  assert.equal((await kycOnly.call('GET', '/v1/events/stream')).status, 403);
  const bad = await api.call('GET', '/v1/events/stream', undefined, { 'last-event-id': 'ord_nope' });
  assert.equal(bad.status, 422);
  assert.equal(((await bad.json()) as Json).details[0].field, 'Last-Event-ID');

  const a = await openStream(t, base, api.token);
  const b = await openStream(t, base, api.token);
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(a.comments() >= 1, 'a comment is sent at once, so that clients see the stream open');

  const started = Date.now();
  await runtime.close();
  const took = Date.now() - started;
  assert.ok(took < 3000, `close took ${took} ms`);
  await Promise.race([
    Promise.all([a.ended, b.ended]),
    new Promise((_, reject) => setTimeout(() => reject(new Error('streams not ended')), 2000)),
  ]);
});

for (const database of DATABASES) {
  test(`HEAD /v1/events/stream answers the stream's headers at once and ends, on ${database.name}`, async (t) => {
    const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
    const base = await listen(runtime);
    const api = await apiClient(runtime, base);
    const started = Date.now();
    const res = await fetch(`${base}/v1/events/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${api.token}` },
      signal: AbortSignal.timeout(5000),
    });
    assert.ok(Date.now() - started < 3000, 'answered at once');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-z]{26}$/);
    assert.ok(res.headers.get('x-ratelimit-limit'));
    assert.equal(await res.text(), '');
    const bad = await fetch(`${base}/v1/events/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${api.token}`, 'last-event-id': 'x' },
    });
    assert.equal(bad.status, 422, 'checked as a GET is');
  });
}

test('POST /v1/events/{id}/resend delivers a stored event again, to its subscribers or to a named endpoint', async (t) => {
  const received: { headers: IncomingHttpHeaders; body: string; path: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const hooks = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const subscribed = ((await (await api.post('/v1/webhooks/endpoints', { url: `${hooks}/a`, events: ['kyc.attested'] })).json()) as Json)
    .id as string;
  const unsubscribed = ((await (await api.post('/v1/webhooks/endpoints', { url: `${hooks}/b`, events: ['order.created'] })).json()) as Json)
    .id as string;

  await attest(api);
  const waitFor = async (n: number) => {
    const deadline = Date.now() + 15_000;
    while (received.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(received.length, n);
  };
  await waitFor(1);
  const first = received[0]!;
  const eventId = (JSON.parse(first.body) as Json).id as string;
  // Wait until the first delivery is recorded as succeeded.
  for (let i = 0; i < 100; i++) {
    const list = (await (await api.call('GET', `/v1/webhooks/deliveries?event_id=${eventId}`)).json()) as Json;
    if (list.data[0]?.status === 'succeeded') break;
    await new Promise((r) => setTimeout(r, 50));
  }

  const again = await api.post(`/v1/events/${eventId}/resend`, {});
  assert.equal(again.status, 202, await again.clone().text());
  const body = (await again.json()) as Json;
  assert.equal(body.event_id, eventId);
  assert.equal(body.deliveries.length, 1);
  assert.equal(body.deliveries[0].endpoint_id, subscribed);
  assert.equal(body.deliveries[0].status, 'pending');
  await waitFor(2);
  assert.equal(received[1]!.body, first.body, 'the same bytes');
  assert.equal(
    received[1]!.headers['x-cauri-idempotency-key'],
    first.headers['x-cauri-idempotency-key'],
    'same event to same endpoint: same key',
  );

  // To a named endpoint not subscribed to the type: a new delivery.
  const named = (await (await api.post(`/v1/events/${eventId}/resend`, { endpoint_id: unsubscribed })).json()) as Json;
  assert.equal(named.deliveries[0].endpoint_id, unsubscribed);
  await waitFor(3);
  assert.equal(received[2]!.path, '/b');
  assert.equal(received[2]!.body, first.body);

  assert.equal((await api.post(`/v1/events/evt_01h455vb4pex5vsknk084sn02q/resend`, {})).status, 404);
  assert.equal((await api.post(`/v1/events/${eventId}/resend`, { endpoint_id: 'we_01h455vb4pex5vsknk084sn02q' })).status, 404);
  const noKey = await api.call('POST', `/v1/events/${eventId}/resend`, {});
  assert.equal(noKey.status, 422);
});

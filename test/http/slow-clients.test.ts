import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { Type } from '@sinclair/typebox';
import { parseConfig } from '../../src/config/config.js';
import { createHttpApp } from '../../src/http/app.js';
import { Metrics } from '../../src/http/metrics.js';

// The HTTP edge with small time-outs, so that slow clients are cut off within a few seconds. Clients
// are raw sockets on loopback, which can send a request as slowly as an attacker would.
const LIMITS = { CAURI_HTTP_HEADERS_TIMEOUT_MS: '600', CAURI_HTTP_REQUEST_TIMEOUT_MS: '1200', CAURI_HTTP_KEEP_ALIVE_TIMEOUT_MS: '800' };

async function edge(t: TestContext, env: Record<string, string> = {}) {
  const config = parseConfig({ LOG_LEVEL: 'silent', ...LIMITS, ...env });
  const metrics = new Metrics({
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    commitStats: () => ({ batches: 0, units: 0 }),
    pendingEvents: async () => 0,
  });
  const app = await createHttpApp(config, metrics);
  let handled = 0;
  app.post('/v1/things', { schema: { body: Type.Object({ qty: Type.Integer() }) } }, async () => {
    handled++;
    return { ok: true };
  });
  app.get('/v1/ping', async () => ({ ok: true }));
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const sockets = new Set<Socket>();
  t.after(async () => {
    // The test's own connections first: closing the server waits for every open one.
    for (const socket of sockets) socket.destroy();
    await app.close();
  });
  const port = Number(new URL(base).port);
  return { base, port, metrics, handled: () => handled, client: () => rawClient(sockets, port) };
}

interface RawClient {
  socket: Socket;
  /** Resolves when the server closes the connection: everything it sent, and when. */
  closed: Promise<{ text: string; afterMs: number }>;
  /** Writes `text` one character every `intervalMs`, until done or the connection is closed. */
  trickle(text: string, intervalMs: number): void;
}

function rawClient(sockets: Set<Socket>, port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    sockets.add(socket);
    const started = Date.now();
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {}); // a reset counts as closed
    const closed = new Promise<{ text: string; afterMs: number }>((done) =>
      socket.once('close', () => {
        clearInterval(timer);
        sockets.delete(socket);
        done({ text, afterMs: Date.now() - started });
      }),
    );
    socket.once('connect', () =>
      resolve({
        socket,
        closed,
        trickle(payload, intervalMs) {
          let i = 0;
          timer = setInterval(() => {
            if (i >= payload.length || socket.destroyed) clearInterval(timer);
            else socket.write(payload[i++] as string);
          }, intervalMs);
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** The status and JSON body of a raw HTTP/1.1 response. */
function parseResponse(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    headers: head.toLowerCase(),
    body: JSON.parse(body) as Record<string, unknown>,
  };
}

/** Plain requests, one every 100 ms while `during` runs; every one must answer quickly. */
async function keepsAnswering(base: string, during: Promise<unknown>): Promise<number[]> {
  let done = false;
  void during.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = Date.now();
    const res = await fetch(`${base}/v1/ping`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    latencies.push(Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return latencies;
}

// Without the time-outs these tests would wait for ever; each fails after a few seconds instead.
const BOUNDED = { timeout: 10_000 };

test(
  'a body sent a byte at a time is cut off at the request time-out with 408 and the error body; others are served meanwhile',
  BOUNDED,
  async (t) => {
    const { base, client, metrics, handled } = await edge(t);
    const slow = await client();
    const body = '{"qty":1}'.padEnd(64, ' ');
    slow.socket.write(`POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    slow.trickle(body, 100); // 6.4 s for the whole body, against a 1.2 s limit

    const latencies = await keepsAnswering(base, slow.closed);
    const { text, afterMs } = await slow.closed;
    assert.ok(afterMs >= 1200 && afterMs < 2500, `closed after ${afterMs} ms`);
    const response = parseResponse(text);
    assert.equal(response.status, 408);
    assert.match(response.headers, /connection: close/);
    assert.equal(response.body.code, 'request_timeout');
    assert.match(String(response.body.message), /1200 ms/);
    assert.match(String(response.body.request_id), /^req_/);
    assert.match(response.headers, new RegExp(`x-request-id: ${String(response.body.request_id)}`));
    assert.equal(handled(), 0, 'the handler never ran');
    // At least three answered in the 1.2 s it stayed open (one every 100 ms plus its own time, a few
    // hundred milliseconds on a loaded machine), each well before the time-out.
    assert.ok(latencies.length >= 3 && Math.max(...latencies) < 500, `plain requests kept answering: ${latencies.join(', ')} ms`);
    assert.match(await metrics.registry.metrics(), /cauri_http_connections_closed_total\{reason="request_timeout"\} 1/);
  },
);

test('headers sent a byte at a time are cut off at the headers time-out with 408', BOUNDED, async (t) => {
  const { base, client, handled } = await edge(t);
  const slow = await client();
  slow.trickle('POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"qty":1}', 100);
  const latencies = await keepsAnswering(base, slow.closed);
  const { text, afterMs } = await slow.closed;
  assert.ok(afterMs >= 600 && afterMs < 1700, `closed after ${afterMs} ms`);
  const response = parseResponse(text);
  assert.equal(response.status, 408);
  assert.equal(response.body.code, 'request_timeout');
  assert.equal(handled(), 0);
  assert.ok(Math.max(...latencies) < 500, latencies.join(', '));
});

test(
  'a connection that sends nothing is closed at the headers time-out; an idle keep-alive one at the keep-alive time-out',
  BOUNDED,
  async (t) => {
    const { client } = await edge(t);
    const silent = await client();
    const quiet = await silent.closed;
    assert.ok(quiet.afterMs >= 600 && quiet.afterMs < 1700, `silent connection closed after ${quiet.afterMs} ms`);

    const idle = await client();
    idle.socket.write('GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n');
    const { text, afterMs } = await idle.closed;
    assert.match(text, /^HTTP\/1\.1 200/, 'answered first');
    // Node adds a second of margin to the keep-alive time-out.
    assert.ok(afterMs >= 800 && afterMs < 2600, `idle keep-alive connection closed after ${afterMs} ms`);
  },
);

test('connections over the cap are closed as they arrive; the ones admitted are served', BOUNDED, async (t) => {
  const { base, client, metrics } = await edge(t, {
    CAURI_HTTP_MAX_CONNECTIONS: '2',
    CAURI_HTTP_HEADERS_TIMEOUT_MS: '5000',
    CAURI_HTTP_REQUEST_TIMEOUT_MS: '5000',
  });
  const first = await client();
  const second = await client();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const third = await client();
  third.socket.write('GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n');
  const refused = await third.closed;
  assert.equal(refused.text, '', 'closed without an answer');
  assert.ok(refused.afterMs < 1000);
  assert.match(await metrics.registry.metrics(), /cauri_http_connections_closed_total\{reason="max_connections"\} 1/);

  first.socket.write('GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assert.match((await first.closed).text, /^HTTP\/1\.1 200/, 'an admitted connection is served');
  second.socket.destroy();
  await second.closed;
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await fetch(`${base}/v1/ping`, { headers: { connection: 'close' } })).status, 200, 'room again once connections close');
});

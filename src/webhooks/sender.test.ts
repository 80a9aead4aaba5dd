import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UndiciSender, type Resolver } from './sender.js';

async function listening(t: import('node:test').TestContext, status = 200): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => res.writeHead(status).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, hits: () => hits };
}

const request = (url: string) => ({ url, headers: { 'content-type': 'application/json' }, body: '{}' });

/** A loopback HTTP server for one test, closed (with its connections) after it; its base URL. */
async function serve(t: import('node:test').TestContext, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('public-only: literal private, loopback and link-local addresses are refused without a connection', async (t) => {
  const receiver = await listening(t);
  const sender = new UndiciSender({ timeoutMs: 1000, publicOnly: true });
  t.after(() => sender.close());
  for (const url of [
    `http://127.0.0.1:${receiver.port}/`,
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    `http://[::1]:${receiver.port}/`,
    `http://[::ffff:127.0.0.1]:${receiver.port}/`,
  ]) {
    const result = await sender.send(request(url));
    assert.equal(result.statusCode, null, url);
    assert.match(result.error ?? '', /address refused/, url);
  }
  assert.equal(receiver.hits(), 0);
});

test('public-only: a name that resolves to loopback (localhost, through the system resolver) is refused', async (t) => {
  const receiver = await listening(t);
  const sender = new UndiciSender({ timeoutMs: 1000, publicOnly: true });
  t.after(() => sender.close());
  const result = await sender.send(request(`http://localhost:${receiver.port}/`));
  assert.equal(result.statusCode, null);
  assert.match(result.error ?? '', /address refused: localhost resolves to an address that is not public/);
  assert.doesNotMatch(result.error ?? '', /127\.0\.0\.1|::1/, 'the address is not named');
  assert.equal(receiver.hits(), 0);
});

test('the socket connects to the address that was checked: a resolver answer is used as given', async (t) => {
  const receiver = await listening(t);
  let calls = 0;
  // A rebinding resolver: public on the first answer, loopback afterwards. There is one resolution
  // per connection, shared by the check and the connect, so the second answer is never connected to.
  const rebinding: Resolver = async () => (calls++ === 0 ? [{ address: '8.8.8.8', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
  const guarded = new UndiciSender({ timeoutMs: 300, publicOnly: true, resolve: rebinding });
  t.after(() => guarded.close());
  const first = await guarded.send(request(`http://hooks.example.test:${receiver.port}/`));
  assert.equal(first.statusCode, null, 'the checked public address does not answer here (no network or timeout)');
  assert.equal(calls, 1, 'one resolution for the check and the connection');
  const second = await guarded.send(request(`http://hooks.example.test:${receiver.port}/`));
  assert.match(second.error ?? '', /address refused: hooks.example.test resolves to an address that is not public/);
  assert.doesNotMatch(second.error ?? '', /127\.0\.0\.1/);
  assert.equal(receiver.hits(), 0);

  // Without the public-only policy (sandbox), the resolved loopback address is used.
  const open = new UndiciSender({ timeoutMs: 1000, publicOnly: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  t.after(() => open.close());
  const ok = await open.send(request(`http://hooks.example.test:${receiver.port}/`));
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.error, null);
  assert.equal(receiver.hits(), 1);
});

test('a name with one private answer among public ones is refused as a whole', async (t) => {
  const sender = new UndiciSender({
    timeoutMs: 300,
    publicOnly: true,
    resolve: async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ],
  });
  t.after(() => sender.close());
  const result = await sender.send(request('http://mixed.example.test/'));
  assert.match(result.error ?? '', /mixed.example.test resolves to an address that is not public/);
  assert.doesNotMatch(result.error ?? '', /10\.1\.2\.3|8\.8\.8\.8/);
});

test('non-2xx statuses are failures, with the status recorded', async (t) => {
  const receiver = await listening(t, 500);
  const sender = new UndiciSender({ timeoutMs: 1000, publicOnly: false });
  t.after(() => sender.close());
  const result = await sender.send(request(`http://127.0.0.1:${receiver.port}/`));
  assert.equal(result.statusCode, 500);
  assert.equal(result.error, 'HTTP 500');
});

test('each attempt ends at its own deadline: a response that never comes, a 2xx whose body stalls, and quick attempts in between', async (t) => {
  const base = await serve(t, (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/quick') res.writeHead(204).end();
      else if (req.url === '/stall') {
        // A 2xx at once, then a body that never ends: the receiver has accepted the event, and the
        // deadline ends the read of the rest (only read to keep the connection reusable).
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      }
      // '/hang': no answer at all.
    });
  });
  const sender = new UndiciSender({ timeoutMs: 300, publicOnly: false });
  t.after(() => sender.close());
  const started = performance.now();
  const ended: Record<string, number> = {};
  const timed = (name: string, url: string) =>
    sender.send(request(url)).then((result) => {
      ended[name] = performance.now() - started;
      return result;
    });
  const first = timed('first', `${base}/hang`);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const second = timed('second', `${base}/stall`);
  const quick = await Promise.all(Array.from({ length: 20 }, () => sender.send(request(`${base}/quick`))));
  const [a, b] = await Promise.all([first, second]);
  assert.ok(quick.every((r) => r.statusCode === 204 && r.error === null));
  assert.equal(a.statusCode, null);
  assert.equal(a.error, 'timed out after 300 ms');
  assert.equal(b.statusCode, 200);
  assert.equal(b.error, null);
  // Each at its own deadline, 300 ms after it started: not earlier, and the second not at the first's.
  // (The upper bounds only say that a deadline ends its attempt; a loaded machine may fire late.)
  assert.ok((ended.first as number) >= 295 && (ended.first as number) < 2_000, `first ended after ${ended.first} ms`);
  assert.ok((ended.second as number) >= 445 && (ended.second as number) < 2_150, `second ended after ${ended.second} ms`);
  // The sender still works after its deadlines fired.
  assert.equal((await sender.send(request(`${base}/quick`))).statusCode, 204);
});

test('the request carries the method, path with its query, headers and exact body; the response is read to its end and connections are reused', async (t) => {
  const seen: { method?: string; url?: string; headers: Record<string, unknown>; body: string; socket: unknown }[] = [];
  const base = await serve(t, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      });
      res.writeHead(202, { 'content-type': 'text/plain' }).end('x'.repeat(10_000));
    });
  });
  const sender = new UndiciSender({ timeoutMs: 1000, publicOnly: false });
  t.after(() => sender.close());
  const body = '{"id":"evt_1","data":{"note":"é – ✓"}}';
  const url = `${base}/hooks/7?tenant=a&x=%20y#fragment`;
  for (let i = 0; i < 3; i++) {
    const result = await sender.send({ url, headers: { 'content-type': 'application/json', 'x-cauri-signature': `t=1,v1=${i}` }, body });
    assert.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: 202, error: null });
    assert.ok(result.durationMs >= 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(seen.length, 3);
  for (const [i, r] of seen.entries()) {
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/hooks/7?tenant=a&x=%20y');
    assert.equal(r.body, body);
    assert.equal(r.headers['x-cauri-signature'], `t=1,v1=${i}`);
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(body)));
  }
  // One keep-alive connection served the three attempts (each sent once the previous one's
  // connection was free again: undici opens another for an attempt dispatched the moment one ends).
  assert.equal(new Set(seen.map((r) => r.socket)).size, 1);
});

test('a response body over the read limit is not read to its end: the status stands, and the connection is not reused', async (t) => {
  const sockets = new Set<unknown>();
  const base = await serve(t, (req, res) => {
    sockets.add(req.socket);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      // 1 MiB, far over the 64 KiB an attempt reads.
      res.end(Buffer.alloc(1024 * 1024, 1));
    });
  });
  const sender = new UndiciSender({ timeoutMs: 2000, publicOnly: false });
  t.after(() => sender.close());
  const url = `${base}/`;
  const first = await sender.send(request(url));
  // Long enough for a reusable connection to be free again (see the test above).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = await sender.send(request(url));
  assert.deepEqual([first.statusCode, first.error, second.statusCode, second.error], [200, null, 200, null]);
  assert.equal(sockets.size, 2);
});

test('no response: a refused connection and a socket closed before the status are failures without a status, each in words', async (t) => {
  const closing = await serve(t, (req) => {
    req.resume();
    req.on('end', () => req.socket.destroy());
  });
  // A port with no listener: bound, then closed.
  const vacant: Server = createServer();
  await new Promise<void>((resolve) => vacant.listen(0, '127.0.0.1', resolve));
  const vacantPort = (vacant.address() as AddressInfo).port;
  await new Promise<void>((resolve) => vacant.close(() => resolve()));
  const sender = new UndiciSender({ timeoutMs: 1000, publicOnly: false });
  t.after(() => sender.close());
  const refused = await sender.send(request(`http://127.0.0.1:${vacantPort}/`));
  assert.equal(refused.statusCode, null);
  assert.match(refused.error ?? '', /ECONNREFUSED/);
  const closed = await sender.send(request(`${closing}/`));
  assert.equal(closed.statusCode, null);
  assert.match(closed.error ?? '', /closed|socket|reset|other side/i);
  // A URL that does not parse is refused without a request.
  assert.deepEqual(await sender.send(request('not a url')).then((r) => [r.statusCode, r.error]), [null, 'invalid url']);
});

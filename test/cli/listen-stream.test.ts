import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SseParser } from '../../src/cli/integrator/sse-parser.js';
import { verifySignatureHeader } from '../../src/webhooks/core/signature.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/api.js';

// `cauri listen` as a separate process, against the real service through a loopback proxy that can
// answer the token exchange itself or rewrite the stream's line endings, forwarding to a receiver
// that checks each delivery's signature.
const CLI = fileURLToPath(new URL('../../src/cli/cauri.cjs', import.meta.url));

test('the stream parser: a CR ending a chunk ends its line at once; a block of only id: moves the position', () => {
  const parser = new SseParser();
  assert.deepEqual(
    parser.push('id: evt_1\revent: webhook.test\rdata: {}\r\r').map((m) => [m.id, m.event, m.data]),
    [['evt_1', 'webhook.test', '{}']],
    'dispatched without waiting for the next chunk',
  );
  assert.deepEqual(parser.push('\ndata: {"a":1}\n\n'), [{ id: 'evt_1', event: 'message', data: '{"a":1}' }], 'the LF after it is its pair');
  assert.deepEqual(parser.push('id: evt_2\n\n'), []);
  assert.equal(parser.lastEventId, 'evt_2');
  parser.push('id: evt_3\ndata: x\n');
  assert.equal(parser.lastEventId, 'evt_2', 'an id counts once its block is complete');
  const next = new SseParser('evt_2');
  next.push(': connected\n\n');
  assert.equal(next.lastEventId, 'evt_2', 'a new connection starts from the previous position');
});

type Plan = { status: number; headers: Record<string, string>; body: string } | undefined;

async function proxy(t: TestContext, target: string, plan: (path: string) => Plan, rewrite?: (text: string) => string) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const answer = plan(path);
    if (answer !== undefined) {
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      if (rewrite === undefined || !String(r.headers['content-type']).startsWith('text/event-stream')) return void r.pipe(res);
      r.setEncoding('utf8');
      r.on('data', (text: string) => res.write(rewrite(text)));
      r.on('end', () => res.end());
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function receiver(t: TestContext) {
  const bodies: { body: string; signature: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['x-cauri-signature']) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, bodies };
}

function spawnListen(t: TestContext, base: string, api: ApiClient, forwardTo: string) {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-listen-'));
  const env = {
    ...process.env,
    CAURI_CONFIG_DIR: dir,
    CAURI_API_URL: base,
    CAURI_CLIENT_ID: api.clientId,
    CAURI_CLIENT_SECRET: api.clientSecret,
  };
  const child = spawn(process.execPath, [CLI, 'listen', '--forward-to', forwardTo, '--from-now'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const secret = () => /signing secret is (whsec_[A-Za-z0-9_-]+)/.exec(output)?.[1] ?? '';
  const until = async (pattern: RegExp, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern} (exit ${child.exitCode}):\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, secret, until, output: () => output };
}

async function trigger(api: ApiClient): Promise<string> {
  const res = await api.post('/v1/events/test', {});
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { event: { id: string } }).event.id;
}

// What these check is the command line's own reading of the stream and the token exchange, the same
// whatever database the service keeps its events in: the embedded one serves them.
for (const db of DATABASES.filter((d) => d.name === 'sqlite')) {
  describe(`cauri listen (${db.name})`, () => {
    test('a 503 or 429 of the token exchange is waited out, not the end of listen; it then forwards', async (t) => {
      const runtime = await startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['webhooks:manage']);
      const refusals = [
        {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
          body: '{"code":"service_unavailable","message":"starting","request_id":"req_x"}',
        },
        {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
          body: '{"code":"rate_limit_exceeded","message":"slow down","request_id":"req_y"}',
        },
      ];
      const front = await proxy(t, base, (path) => (path === '/v1/auth/token' ? refusals.shift() : undefined));
      const hooks = await receiver(t);
      const listener = spawnListen(t, front, api, hooks.url);
      await listener.until(/token exchange failed: 503[\s\S]*token exchange failed: 429/, 15_000);
      await listener.until(/^Connected to /m, 15_000);
      const id = await trigger(api);
      await listener.until(new RegExp(`${id}  --> POST .* \\[200\\]`), 15_000);
      assert.equal(hooks.bodies.length, 1);
      assert.equal(verifySignatureHeader(hooks.bodies[0]!.signature, hooks.bodies[0]!.body, listener.secret()).valid, true);
    });

    test('a stream with CR line endings: each event is forwarded when it arrives, not at the next ping', async (t) => {
      const runtime = await startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['webhooks:manage']);
      const front = await proxy(
        t,
        base,
        () => undefined,
        (text) => text.replaceAll('\n', '\r'),
      );
      const hooks = await receiver(t);
      const listener = spawnListen(t, front, api, hooks.url);
      await listener.until(/^Connected to /m, 15_000);
      const id = await trigger(api);
      // The service sends an event about two seconds after it happens; its next ping is 15 s away.
      await listener.until(new RegExp(`${id}  --> POST`), 8_000);
      assert.equal((JSON.parse(hooks.bodies[0]?.body ?? '{}') as { id?: string }).id, id);
    });

    test("the stream's retry: is the least wait before listen connects again", async (t) => {
      const runtime = await startRuntime(t, db, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['webhooks:manage']);
      const opened: number[] = [];
      const frame = { status: 200, headers: { 'content-type': 'text/event-stream' }, body: 'retry: 2000\n: bye\n\n' };
      const front = await proxy(t, base, (path) => {
        if (path !== '/v1/events/stream') return undefined;
        opened.push(Date.now());
        return opened.length <= 2 ? frame : undefined;
      });
      const hooks = await receiver(t);
      const listener = spawnListen(t, front, api, hooks.url);
      const deadline = Date.now() + 15_000;
      while (opened.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(opened.length, 3, listener.output());
      assert.ok(
        opened[1]! - opened[0]! >= 2000 && opened[2]! - opened[1]! >= 2000,
        `waits: ${opened[1]! - opened[0]!}, ${opened[2]! - opened[1]!} ms`,
      );
    });
  });
}

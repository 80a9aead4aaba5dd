import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import type { Runtime } from '../../src/app.js';
import { DATABASES, listen, startRuntime, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';
import { runCli } from '../support/process.js';

type Json = Record<string, any>;
const stripe = new Stripe('sk_test_x');
const CLI = fileURLToPath(new URL('../../src/cli/cauri.cjs', import.meta.url));

function configDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The environment of an integrator command: credentials from variables, config in a temporary folder. */
function cliEnv(dir: string, base: string, api: ApiClient): Record<string, string> {
  return { CAURI_CONFIG_DIR: dir, CAURI_API_URL: base, CAURI_CLIENT_ID: api.clientId, CAURI_CLIENT_SECRET: api.clientSecret };
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver answering 200 and recording what it got. */
async function receiver(
  t: TestContext,
): Promise<{ url: string; received: Received[]; waitFor: (n: number, path?: string) => Promise<Received[]> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const waitFor = async (n: number, path = '/listen') => {
    const deadline = Date.now() + 20_000;
    const of = () => received.filter((r) => r.path === path);
    while (of().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(of().length >= n, `expected ${n} requests on ${path}, got ${of().length}`);
    return of();
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, waitFor };
}

/** `cauri listen` as a real, long-running process; killed when the test ends. */
function spawnListen(t: TestContext, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, 'listen', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const until = async (pattern: RegExp, where: 'stdout' | 'stderr' = 'stdout', timeoutMs = 20_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(where === 'stdout' ? stdout : stderr);
      if (match !== null) return match;
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`no ${pattern} in ${where}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    child,
    exited,
    until,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    async stop(): Promise<number | null> {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

let subjects = 0;
async function attest(api: ApiClient): Promise<string> {
  const res = await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: `inv-cli-${++subjects}` });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as Json).id as string;
}

test('cauri login stores the credentials with mode 0600, and the other commands use them', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const dir = configDir(t);

  const refused = await runCli(['login', '--api-url', base, '--client-id', api.clientId, '--client-secret', 'sk_test_wrong'], {
    CAURI_CONFIG_DIR: dir,
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refused the client credentials/);

  const login = await runCli(['login', '--api-url', `${base}/`, '--client-id', api.clientId, '--client-secret', api.clientSecret], {
    CAURI_CONFIG_DIR: dir,
  });
  assert.equal(login.code, 0, login.stderr);
  const file = join(dir, 'credentials.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { api_url: base, client_id: api.clientId, client_secret: api.clientSecret });

  const id = await attest(api);
  const list = await runCli(['events', 'list', '--json', '--type', 'kyc.attested'], { CAURI_CONFIG_DIR: dir });
  assert.equal(list.code, 0, list.stderr);
  const events = JSON.parse(list.stdout) as Json[];
  assert.equal(events.length, 1);
  assert.equal(events[0]!.data.id, id);
  assert.deepEqual(Object.keys(events[0]!), ['id', 'type', 'created_at', 'data', 'livemode']);

  const table = await runCli(['events', 'list'], { CAURI_CONFIG_DIR: dir });
  assert.match(table.stdout, /^id\s+type\s+created_at\s+livemode$/m);

  // Without an endpoint, a sample is still one of the client's events (for the stream and cauri listen).
  const sample = await runCli(['trigger', 'webhook.test', '--json'], { CAURI_CONFIG_DIR: dir });
  assert.equal(sample.code, 0, sample.stderr);
  const stored = (JSON.parse(sample.stdout) as Json).event as Json;
  assert.equal(stored.type, 'webhook.test');
  assert.equal(stored.data.endpoint_id, null);
  const listed = JSON.parse(
    (await runCli(['events', 'list', '--json', '--type', 'webhook.test'], { CAURI_CONFIG_DIR: dir })).stdout,
  ) as Json[];
  assert.deepEqual(
    listed.map((e) => e.id),
    [stored.id],
  );
  const noDelivery = (await (await api.call('GET', `/v1/webhooks/deliveries?event_id=${stored.id as string}`)).json()) as Json;
  assert.deepEqual(noDelivery.data, [], 'no endpoint, no delivery');
  const unknown = await runCli(['trigger', 'order.teleported'], { CAURI_CONFIG_DIR: dir });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown event type/);

  const missing = await runCli(['events', 'list'], { CAURI_CONFIG_DIR: configDir(t) });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no credentials: run cauri login/);
});

test('cauri listen forwards events signed like webhook deliveries; cauri trigger and cauri events resend reach it', async (t) => {
  const hooks = await receiver(t);
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const dir = configDir(t);
  const env = cliEnv(dir, base, api);

  const listener = spawnListen(t, ['--forward-to', `${hooks.url}/listen`], env);
  const secret = (await listener.until(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1] as string;
  await listener.until(/^Connected to /m);
  assert.equal(JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).listen_secret, secret, 'kept for the next run');

  // An endpoint to trigger through (the service delivers there; listen forwards the stored event).
  const endpoint = (
    (await (await api.post('/v1/webhooks/endpoints', { url: `${hooks.url}/endpoint`, events: ['kyc.attested'] })).json()) as Json
  ).id as string;
  const trigger = await runCli(['trigger', 'webhook.test', '--endpoint', endpoint, '--json'], env);
  assert.equal(trigger.code, 0, trigger.stderr);
  const triggered = [JSON.parse(trigger.stdout) as Json];
  assert.equal(triggered[0]!.delivery.endpoint_id, endpoint);

  const [forwarded] = await hooks.waitFor(1);
  const event = stripe.webhooks.constructEvent(
    forwarded!.body,
    forwarded!.headers['x-cauri-signature'] as string,
    secret,
  ) as unknown as Json;
  assert.equal(event.id, triggered[0]!.event.id);
  assert.equal(event.type, 'webhook.test');
  assert.equal(forwarded!.headers['content-type'], 'application/json');
  assert.equal(forwarded!.headers['user-agent'], 'Cauri-Webhooks/1.0');
  assert.match(forwarded!.headers['x-cauri-idempotency-key'] as string, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  // The body is the envelope byte for byte, as the service's own delivery to the endpoint has it.
  const [delivered] = await hooks.waitFor(1, '/endpoint');
  assert.equal(forwarded!.body, delivered!.body);
  await listener.until(new RegExp(`webhook\\.test\\s+${event.id}\\s+--> POST \\S+ \\[200\\]`));

  const attestation = await attest(api);
  const [, second] = await hooks.waitFor(2);
  const attested = stripe.webhooks.constructEvent(second!.body, second!.headers['x-cauri-signature'] as string, secret) as unknown as Json;
  assert.equal(attested.type, 'kyc.attested');
  assert.equal(attested.data.id, attestation);

  // Resending the stored event through the CLI: the endpoint gets it again.
  await hooks.waitFor(2, '/endpoint');
  // A pending delivery is left as it is; wait until the first one is recorded as succeeded.
  for (let i = 0; i < 200; i++) {
    const list = (await (await api.call('GET', `/v1/webhooks/deliveries?event_id=${attested.id as string}`)).json()) as Json;
    if (list.data[0]?.status === 'succeeded') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const resent = await runCli(['events', 'resend', attested.id as string, '--json'], env);
  assert.equal(resent.code, 0, resent.stderr);
  assert.equal((JSON.parse(resent.stdout) as Json).deliveries[0].endpoint_id, endpoint);
  const endpointHits = await hooks.waitFor(3, '/endpoint');
  assert.equal(endpointHits.filter((r) => (JSON.parse(r.body) as Json).id === attested.id).length, 2);

  assert.equal(await listener.stop(), 0, 'SIGTERM ends listen cleanly');
  assert.equal(hooks.received.filter((r) => r.path === '/listen').length, 2, 'each event forwarded once');
});

test('cauri listen against an address where nothing listens retries with backoff and says why', async (t) => {
  const dir = configDir(t);
  // A port that was just free: connections are refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const listener = spawnListen(t, ['--forward-to', 'http://127.0.0.1:9/hooks'], {
    CAURI_CONFIG_DIR: dir,
    CAURI_API_URL: `http://127.0.0.1:${port}`,
    CAURI_CLIENT_ID: 'cli_01h455vb4pex5vsknk084sn02q',
    CAURI_CLIENT_SECRET: 'sk_test_x',
  });
  await listener.until(
    /cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused \(is the service running\?\); retrying in [\d.]+s \(attempt 1\)/,
    'stderr',
  );
  await listener.until(/\(attempt 2\)/, 'stderr');
  assert.equal(listener.child.exitCode, null, 'still retrying');

  const bad = spawnListen(t, ['--forward-to', 'not a url'], {
    CAURI_CONFIG_DIR: dir,
    CAURI_API_URL: 'http://127.0.0.1:9',
    CAURI_CLIENT_ID: 'x',
    CAURI_CLIENT_SECRET: 'y',
  });
  assert.equal(await bad.exited, 1);
  assert.match(bad.stderr, /--forward-to must be an absolute http\(s\) URL/);
  assert.equal(await listener.stop(), 0);
});

test('cauri listen survives a service restart and resumes with the events created while it was away', async (t) => {
  const hooks = await receiver(t);
  const env = testEnvironment(t, DATABASES[0]!);
  const first = await startRuntimeIn(t, env);
  const base = await listen(first);
  const port = Number(new URL(base).port);
  const api = await apiClient(first, base);
  const listener = spawnListen(t, ['--forward-to', `${hooks.url}/listen`], cliEnv(configDir(t), base, api));
  await listener.until(/^Connected to /m);

  const before = await attest(api);
  await hooks.waitFor(1);

  await first.close();
  await listener.until(/service closed the stream|connection dropped/, 'stderr');

  // The next process of the same deployment (same data folder and keys): the events it records before
  // it listens are the ones the listener missed. The token of the first process stays valid.
  const second: Runtime = await startRuntimeIn(t, env);
  const missed: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await second.app.inject({
      method: 'POST',
      url: '/v1/kyc/attestations',
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      payload: { ...KYC2_REQUEST, subject_id: `inv-restart-${i}` },
    });
    assert.equal(res.statusCode, 201, res.body);
    missed.push((res.json() as Json).id as string);
  }
  await second.app.listen({ host: '127.0.0.1', port });
  await listener.until(/^Reconnected to .* \(resuming after evt_/m, 'stdout', 40_000);

  const got = await hooks.waitFor(3);
  const ids = got.map((r) => (JSON.parse(r.body) as Json).data.id as string);
  assert.deepEqual(ids, [before, ...missed], 'no duplicate, no gap');
  assert.equal(await listener.stop(), 0);
});

test('cauri listen restarted without --after forwards what happened while it was stopped, once; --from-now skips it', async (t) => {
  const hooks = await receiver(t);
  const runtime = await startRuntime(t, DATABASES[0]!);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const dir = configDir(t);
  const env = cliEnv(dir, base, api);

  const printed = await runCli(['listen', '--print-secret'], env);
  assert.equal(printed.code, 0, printed.stderr);
  const secret = printed.stdout.trim();
  assert.match(secret, /^whsec_/);

  const first = spawnListen(t, ['--forward-to', `${hooks.url}/listen`], env);
  assert.equal((await first.until(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1], secret, 'the secret --print-secret gave');
  await first.until(/^Connected to /m);
  const before = await attest(api);
  await hooks.waitFor(1);
  await first.until(/kyc\.attested\s+evt_\w+\s+--> POST/);
  assert.equal(await first.stop(), 0);

  // While nothing listens: an attestation, and a sample event triggered without any endpoint.
  const during = await attest(api);
  const trigger = await runCli(['trigger', 'order.executed', '--json'], env);
  assert.equal(trigger.code, 0, trigger.stderr);
  const sample = (JSON.parse(trigger.stdout) as Json).event as Json;

  const second = spawnListen(t, ['--forward-to', `${hooks.url}/listen`], env);
  await second.until(/^Resuming after evt_[0-9a-z]{26}, where the last listen stopped/m);
  const got = await hooks.waitFor(3);
  const events = got.map(
    (r) => stripe.webhooks.constructEvent(r.body, r.headers['x-cauri-signature'] as string, secret) as unknown as Json,
  );
  assert.deepEqual(
    events.map((e) => (e.type === 'kyc.attested' ? e.data.id : e.id)),
    [before, during, sample.id],
    'what happened while stopped, in order, and nothing twice',
  );
  assert.equal(await second.stop(), 0);

  // --from-now forgets the position: an event made while stopped is not forwarded.
  await attest(api);
  // The stream starts "now" a moment in the past (its settle window, about two seconds): let the event age past it.
  await new Promise((r) => setTimeout(r, 3_000));
  const third = spawnListen(t, ['--forward-to', `${hooks.url}/listen`, '--from-now'], env);
  await third.until(/^Connected to /m);
  assert.doesNotMatch(third.stdout, /Resuming after/);
  const after = await attest(api);
  const all = await hooks.waitFor(4);
  assert.equal((JSON.parse(all[3]!.body) as Json).data.id, after);
  assert.equal(await third.stop(), 0);
  assert.equal(hooks.received.filter((r) => r.path === '/listen').length, 4);

  const conflicting = await runCli(['listen', '--forward-to', `${hooks.url}/listen`, '--from-now', '--after', sample.id as string], env);
  assert.equal(conflicting.code, 1);
  assert.match(conflicting.stderr, /--after and --from-now cannot be used together/);
});

for (const database of DATABASES)
  test(`cauri listen forwards with the delivery headers of the service it listens to, under another service name, on ${database.name}`, async (t) => {
    const hooks = await receiver(t);
    const runtime = await startRuntime(t, database, { CAURI_SERVICE_NAME: 'my-broker' });
    const base = await listen(runtime);
    const api = await apiClient(runtime, base);
    const env = cliEnv(configDir(t), base, api);
    const listener = spawnListen(t, ['--forward-to', `${hooks.url}/listen`], env);
    const secret = (await listener.until(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1] as string;
    await listener.until(/^Connected to /m);

    const trigger = await runCli(['trigger', 'webhook.test', '--json'], env);
    assert.equal(trigger.code, 0, trigger.stderr);
    const [forwarded] = await hooks.waitFor(1);
    const headers = forwarded!.headers;
    // The names the service's own deliveries carry, as its OpenAPI document's webhooks section gives them.
    const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Json;
    const parameters = document.webhooks['webhook.test'].post.parameters as Array<{ name: string; required: boolean }>;
    for (const { name } of parameters.filter((p) => p.required && p.name !== 'traceparent'))
      assert.ok(headers[name.toLowerCase()] !== undefined, `${name} forwarded`);
    const event = stripe.webhooks.constructEvent(forwarded!.body, headers['x-my-broker-signature'] as string, secret) as unknown as Json;
    assert.equal(event.type, 'webhook.test');
    assert.equal(headers['user-agent'], 'My-Broker-Webhooks/1.0');
    assert.deepEqual(
      Object.keys(headers).filter((name) => name.startsWith('x-cauri-')),
      [],
    );
    assert.equal(await listener.stop(), 0);
  });

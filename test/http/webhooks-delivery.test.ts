import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { Runtime } from '../../src/app.js';
import { resolveMasterKey } from '../../src/config/master-key.js';
import { CursorCodec } from '../../src/http/cursor.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createWebhooks, type WebhookOptions } from '../../src/webhooks/index.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/workers/delivery-worker.js';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment, type DatabaseCase, type TestEnvironment } from '../support/harness.js';
import { apiClient, type ApiClient } from '../support/api.js';

type Json = Record<string, any>;
const stripe = new Stripe('sk_test_x');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The service clock when the request arrived, in Unix seconds (the verifier's "now"). */
  at: number;
}

interface Receiver {
  url: string;
  received: Received[];
}

/** A real HTTP receiver on a loopback port; `handle` answers (default 200). */
async function receiver(t: TestContext, clock: ManualClock, handle?: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Math.floor(clock.now().getTime() / 1000) });
      if (handle === undefined) res.writeHead(200).end('ok');
      else handle(req, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** Verifies a delivery with the official Stripe SDK, as a receiver would. */
function verify(r: Received, secret: string): Json {
  return stripe.webhooks.constructEvent(r.body, r.headers['x-cauri-signature'] as string, secret, 300, undefined, r.at) as unknown as Json;
}

interface Ctx {
  runtime: Runtime;
  env: TestEnvironment;
  clock: ManualClock;
  base: string;
  api: ApiClient;
  worker: DeliveryWorker;
  newWorker: (options?: Partial<WebhookOptions>) => DeliveryWorker;
  /** A fresh access token for `api` (the clock may have moved past the first one's 15 minutes). */
  call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>;
  endpoint: (url: string, events?: string[]) => Promise<{ id: string; secret: string }>;
  /** Stores an event as the other modules do (an order's change), for this client. */
  emit: (type?: string) => Promise<string>;
  deliveries: (query?: string) => Promise<Json[]>;
}

async function setup(t: TestContext, database: DatabaseCase, env: Record<string, string> = {}, options: Partial<WebhookOptions> = {}): Promise<Ctx> {
  const clock = new ManualClock(new Date());
  const e = testEnvironment(t, database, { CAURI_WORKERS: 'none', ...env }, { clock });
  const runtime = await startRuntimeIn(t, e);
  const base = await listen(runtime);
  const api = await apiClient(runtime, base);
  const newWorker = (more: Partial<WebhookOptions> = {}) => {
    const webhooks = createWebhooks({
      config: runtime.config,
      storage: runtime.storage,
      clock,
      masterKey: resolveMasterKey(runtime.config),
      idempotency: runtime.services.idempotency,
      cursors: new CursorCodec(Buffer.alloc(32)),
      log: runtime.app.log,
      // No jitter, so the schedule's offsets are exact.
      options: { random: () => 0.5, timeoutMs: 2000, ...options, ...more },
    });
    const worker = createDeliveryWorker(webhooks);
    t.after(() => worker.stop());
    return worker;
  };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret }),
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    return fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  };
  return {
    runtime,
    env: e,
    clock,
    base,
    api,
    worker: newWorker(),
    newWorker,
    call,
    endpoint: async (url, events = ['order.created']) => {
      const res = await api.post('/v1/webhooks/endpoints', { url, events });
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as { id: string; secret: string };
    },
    emit: async (type = 'order.created') => {
      const { recordEvent } = await import('../../src/events/event.service.js');
      const event = await runtime.storage.db.transaction().execute((trx) =>
        recordEvent(trx, { clientId: api.clientId as never, type: type as never, data: { id: 'ord_sample', status: 'created' }, livemode: false, at: clock.now() }),
      );
      return event.id;
    },
    deliveries: async (query = '') => {
      const res = await call('GET', `/v1/webhooks/deliveries${query}`);
      assert.equal(res.status, 200);
      return ((await res.json()) as { data: Json[] }).data;
    },
  };
}

/** Moves the clock to `offset` ms after `start` and runs one worker pass. */
async function at(c: Ctx, start: number, offset: number, worker = c.worker) {
  c.clock.set(start + offset);
  return worker.runOnce();
}

for (const database of DATABASES) {
  describe(`webhook delivery on ${database.name}`, () => {
    test('a delivery is signed so that the official Stripe SDK verifies it, with the documented headers', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock);
      const ep = await c.endpoint(r.url);
      const eventId = await c.emit();
      assert.deepEqual(await c.worker.runOnce(), { dispatched: 1, attempted: 1 });
      assert.equal(r.received.length, 1);
      const got = r.received[0] as Received;
      const event = verify(got, ep.secret);
      assert.equal(event.id, eventId);
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['user-agent'], 'Cauri-Webhooks/1.0');
      assert.match(got.headers['x-cauri-idempotency-key'] as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.match(got.headers['x-cauri-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.deepEqual(Object.keys(JSON.parse(got.body)), ['id', 'type', 'created_at', 'data', 'livemode']);
      assert.match(JSON.parse(got.body).created_at, /\.\d{3}Z$/);
      // A wrong secret fails.
      assert.throws(() => verify(got, 'whsec_wrong'));
      // GET /v1/events/{id} shows the same envelope.
      const stored = (await (await c.call('GET', `/v1/events/${eventId}`)).json()) as Json;
      assert.deepEqual(stored, JSON.parse(got.body));
      // Nothing is due any more.
      assert.deepEqual(await c.worker.runOnce(), { dispatched: 0, attempted: 0 });
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.equal(delivery?.attempts.length, 1);
      assert.equal(delivery?.attempts[0].status_code, 200);
      assert.equal(delivery?.idempotency_key, got.headers['x-cauri-idempotency-key']);
    });

    test('fan-out: only the owner\'s enabled endpoints subscribed to the type; broadcast events reach every client', async (t) => {
      const c = await setup(t, database);
      const subscribed = await receiver(t, c.clock);
      const other = await receiver(t, c.clock);
      const disabled = await receiver(t, c.clock);
      await c.endpoint(subscribed.url, ['order.created', 'audit.snapshot']);
      await c.endpoint(other.url, ['kyc.attested']);
      const off = await c.endpoint(disabled.url, ['order.created']);
      assert.equal((await c.call('PATCH', `/v1/webhooks/endpoints/${off.id}`, { disabled: true })).status, 200);
      const stranger = await apiClient(c.runtime, c.base, undefined, 'stranger');
      const strangerReceiver = await receiver(t, c.clock);
      assert.equal((await stranger.post('/v1/webhooks/endpoints', { url: strangerReceiver.url, events: ['order.created', 'audit.snapshot'] })).status, 201);

      await c.emit('order.created');
      const { recordEvent } = await import('../../src/events/event.service.js');
      await c.runtime.storage.db.transaction().execute((trx) => recordEvent(trx, { clientId: null, type: 'audit.snapshot', data: { date: '2026-11-21' }, livemode: false, at: c.clock.now() }));
      await c.worker.runOnce();
      assert.deepEqual(subscribed.received.map((r) => JSON.parse(r.body).type), ['order.created', 'audit.snapshot']);
      assert.equal(other.received.length, 0);
      assert.equal(disabled.received.length, 0);
      assert.deepEqual(strangerReceiver.received.map((r) => JSON.parse(r.body).type), ['audit.snapshot']);
    });

    test('the whole schedule on an injected clock: fails three times, then succeeds; same body, key and event id, new signature each time', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock, (_req, res, n) => res.writeHead(n <= 3 ? 500 : 204).end());
      const ep = await c.endpoint(r.url);
      await c.emit();
      const t0 = c.clock.now().getTime();
      assert.equal((await at(c, t0, 0)).attempted, 1); // first attempt
      assert.equal((await at(c, t0, 0)).attempted, 1); // retry at once
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[2]! - 1)).attempted, 0, 'not before +30 s');
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[2]!)).attempted, 1); // +30 s
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[3]! - 1)).attempted, 0, 'not before +5 min');
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[3]!)).attempted, 1); // +5 min: 204
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[7]!)).attempted, 0, 'nothing after success');

      assert.equal(r.received.length, 4);
      assert.equal(new Set(r.received.map((x) => x.body)).size, 1, 'identical body bytes');
      assert.equal(new Set(r.received.map((x) => x.headers['x-cauri-idempotency-key'])).size, 1, 'one idempotency key');
      assert.equal(new Set(r.received.map((x) => x.headers['x-cauri-signature'])).size, 3, 'signed anew: the two immediate attempts share t');
      for (const x of r.received) verify(x, ep.secret);
      assert.deepEqual(
        r.received.map((x) => Number(/^t=(\d+)/.exec(x.headers['x-cauri-signature'] as string)?.[1])),
        [0, 0, 30_000, 300_000].map((offset) => Math.floor((t0 + offset) / 1000)),
      );
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(delivery?.attempts.map((a: Json) => a.status_code), [500, 500, 500, 204]);
      assert.deepEqual(delivery?.attempts.map((a: Json) => a.error), ['HTTP 500', 'HTTP 500', 'HTTP 500', null]);
      for (const a of delivery?.attempts ?? []) assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0);
      // The worker's own figures (for /metrics) count the same: one event, four claims and records.
      const { stats } = c.worker;
      assert.deepEqual(stats.attempts, { succeeded: 1, failed: 3 });
      assert.deepEqual([stats.fanOut.units, stats.claim.units, stats.record.units], [1, 4, 4]);
      for (const step of [stats.fanOut, stats.claim, stats.record]) assert.ok(step.seconds > 0 && step.seconds < 10, String(step.seconds));
    });

    test('a delivery whose worker died mid-attempt is sent by another once the lease lapses, and not before', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock);
      await c.endpoint(r.url);
      await c.emit();
      assert.equal(await c.worker.fanOut(), 1);
      // What a worker leaves behind when it dies after leasing a delivery and before recording its attempt.
      const start = c.clock.now().getTime();
      await c.runtime.storage.db.updateTable('webhook_deliveries').set({ lease_owner: 'a-dead-worker', lease_until: start + 60_000 }).execute();
      assert.deepEqual(await at(c, start, 59_999), { dispatched: 0, attempted: 0 });
      assert.equal(r.received.length, 0);
      assert.deepEqual(await at(c, start, 60_000), { dispatched: 0, attempted: 1 });
      assert.equal(r.received.length, 1);
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(delivery?.attempts.map((a: Json) => a.status_code), [200]);
      assert.deepEqual(await at(c, start, 120_000), { dispatched: 0, attempted: 0 });
      assert.equal(r.received.length, 1);
    });

    test('a first attempt whose worker died before recording it is sent again with the same bytes and key, its body made again from the event', async (t) => {
      const c = await setup(t, database);
      // The first request is never answered: its worker "dies" with the attempt in flight.
      const r = await receiver(t, c.clock, (_req, res, n) => {
        if (n > 1) res.writeHead(200).end('ok');
      });
      await c.endpoint(r.url);
      const eventId = await c.emit();
      const db = c.runtime.storage.db;
      const a = c.newWorker({ owner: 'worker-a', timeoutMs: 1500, pollIntervalMs: 3_600_000 });
      a.start();
      for (const deadline = performance.now() + 5000; r.received.length === 0 && performance.now() < deadline; ) await new Promise((x) => setTimeout(x, 10));
      assert.equal(r.received.length, 1);
      // Leased as it was fanned out and sent with the body in hand: nothing stored yet.
      assert.equal((await db.selectFrom('webhook_messages').selectAll().where('event_id', '=', eventId).execute()).length, 0);
      // Worker A's lease lapses; another worker takes the delivery.
      c.clock.set(c.clock.now().getTime() + 60_001);
      const b = c.newWorker({ owner: 'worker-b' });
      assert.deepEqual(await b.runOnce(), { dispatched: 0, attempted: 1 });
      assert.equal(r.received.length, 2);
      const [first, second] = r.received as [Received, Received];
      assert.equal(second.body, first.body, 'the same bytes');
      assert.equal(second.headers['x-cauri-idempotency-key'], first.headers['x-cauri-idempotency-key']);
      const stored = await db.selectFrom('webhook_messages').select('body').where('event_id', '=', eventId).execute();
      assert.deepEqual(stored.map((m) => m.body), [first.body]);
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(delivery?.attempts.map((x: Json) => x.status_code), [200], 'the attempt that was never recorded stays unrecorded');
      await a.stop();
      assert.equal(r.received.length, 2, 'worker A, its attempt timed out, sent nothing more');
    });

    test('the retry of a failed first attempt sends the same bytes, and the body is kept for the attempts after it', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock, (_req, res, n) => res.writeHead(n === 1 ? 503 : 200).end());
      await c.endpoint(r.url);
      const eventId = await c.emit();
      const a = c.newWorker({ owner: 'worker-a', pollIntervalMs: 50 });
      a.start();
      for (const deadline = performance.now() + 5000; r.received.length < 2 && performance.now() < deadline; ) await new Promise((x) => setTimeout(x, 10));
      await a.stop();
      assert.equal(r.received.length, 2);
      assert.equal(r.received[1]?.body, r.received[0]?.body);
      const stored = await c.runtime.storage.db.selectFrom('webhook_messages').select('body').where('event_id', '=', eventId).execute();
      assert.deepEqual(stored.map((m) => m.body), [r.received[0]?.body]);
      const [delivery] = await c.deliveries();
      assert.deepEqual(delivery?.attempts.map((x: Json) => x.status_code), [503, 200]);
    });

    test('the delivery worker of a process with workers reports its attempts and steps on /metrics', async (t) => {
      const c = await setup(t, database, { CAURI_WORKERS: 'all' });
      const ok = await receiver(t, c.clock);
      const failing = await receiver(t, c.clock, (_req, res) => res.writeHead(503).end());
      await c.endpoint(ok.url);
      await c.endpoint(failing.url);
      await c.emit();
      await c.emit();
      const metric = (text: string, series: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${series} `));
        return line === undefined ? undefined : Number(line.slice(series.length + 1));
      };
      // Two events to two endpoints: two successes, and at least two failures (the 503s, retried at
      // once), each attempt counted when it is made and its record once committed.
      const settled = (text: string) =>
        (metric(text, 'cauri_webhook_attempts_total{outcome="succeeded"}') ?? 0) >= 2 &&
        (metric(text, 'cauri_webhook_attempts_total{outcome="failed"}') ?? 0) >= 2 &&
        (metric(text, 'cauri_webhook_worker_units_total{step="record"}') ?? 0) >= 4;
      let text = '';
      for (const deadline = performance.now() + 10_000; performance.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
        text = await (await fetch(`${c.base}/metrics`)).text();
        if (settled(text)) break;
      }
      assert.equal(ok.received.length, 2);
      assert.equal(metric(text, 'cauri_webhook_attempts_total{outcome="succeeded"}'), 2);
      assert.ok((metric(text, 'cauri_webhook_attempts_total{outcome="failed"}') ?? 0) >= 2, text);
      assert.equal(metric(text, 'cauri_webhook_worker_units_total{step="fan_out"}'), 2);
      // The running worker leases first attempts as it fans them out: the claim step takes only the
      // retries of the 503s, which may not have been due yet.
      assert.equal(typeof metric(text, 'cauri_webhook_worker_units_total{step="claim"}'), 'number');
      assert.ok((metric(text, 'cauri_webhook_worker_units_total{step="record"}') ?? 0) >= 4);
      assert.ok((metric(text, 'cauri_webhook_worker_units_total{step="commit"}') ?? 0) >= 1);
      for (const step of ['fan_out', 'record', 'commit']) assert.ok((metric(text, `cauri_webhook_worker_seconds_total{step="${step}"}`) ?? 0) > 0, step);
    });

    test('a receiver that hangs past the timeout fails the attempt, and does not hold up other endpoints', async (t) => {
      const c = await setup(t, database, {}, { timeoutMs: 400 });
      const hanging = await receiver(t, c.clock, () => undefined);
      const fast = await receiver(t, c.clock);
      await c.endpoint(hanging.url);
      await c.endpoint(fast.url);
      await c.emit();
      const started = performance.now();
      let fastAt = 0;
      const watch = setInterval(() => {
        if (fast.received.length > 0 && fastAt === 0) fastAt = performance.now() - started;
      }, 5);
      const report = await c.worker.runOnce();
      clearInterval(watch);
      const elapsed = performance.now() - started;
      assert.equal(report.attempted, 2);
      assert.ok(elapsed >= 390 && elapsed < 1900, `pass took ${elapsed} ms`);
      assert.ok(fastAt > 0 && fastAt < 350, `the fast receiver was served after ${fastAt} ms`);
      const slow = (await c.deliveries()).find((d) => d.status === 'pending');
      assert.equal(slow?.attempts[0].status_code, null);
      assert.match(slow?.attempts[0].error, /timed out after 400 ms/);
      assert.ok(slow?.attempts[0].duration_ms >= 390);
    });

    test('at most 4 attempts in flight per endpoint; a dead receiver does not delay the others', async (t) => {
      const c = await setup(t, database, {}, { timeoutMs: 300 });
      let open = 0;
      let peak = 0;
      const stuck = await receiver(t, c.clock, (_req, res) => {
        open++;
        peak = Math.max(peak, open);
        // An attempt is in flight until its exchange ends on either side: the answer sent here, or the
        // worker giving up at its time-out (a loaded machine can fire this timer late).
        res.once('close', () => open--);
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(503).end();
        }, 250);
      });
      const healthy = await receiver(t, c.clock);
      await c.endpoint(stuck.url);
      await c.endpoint(healthy.url);
      for (let i = 0; i < 10; i++) await c.emit();
      const started = performance.now();
      let healthyFirstFour = 0;
      const watch = setInterval(() => {
        if (healthy.received.length >= 4 && healthyFirstFour === 0) healthyFirstFour = performance.now() - started;
      }, 5);
      const report = await c.worker.runOnce();
      clearInterval(watch);
      assert.equal(report.dispatched, 10);
      assert.equal(report.attempted, 8, '4 to each endpoint');
      assert.equal(stuck.received.length, 4);
      assert.ok(healthyFirstFour > 0 && healthyFirstFour < 200, `the healthy endpoint was served after ${healthyFirstFour} ms`);
      for (let i = 0; i < 5 && healthy.received.length < 10; i++) await c.worker.runOnce();
      assert.equal(healthy.received.length, 10);
      assert.ok(peak <= 4, `peak ${peak}`);
    });

    test('a redirect is a failure and is not followed', async (t) => {
      const c = await setup(t, database);
      const target = await receiver(t, c.clock);
      const r = await receiver(t, c.clock, (_req, res) => res.writeHead(302, { location: target.url }).end());
      await c.endpoint(r.url);
      await c.emit();
      await c.worker.runOnce();
      assert.equal(r.received.length, 1);
      assert.equal(target.received.length, 0);
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'pending');
      assert.equal(delivery?.attempts[0].status_code, 302);
      assert.match(delivery?.attempts[0].error, /redirect not followed/);
    });

    test('down for the whole window: dead after the +24 h attempt, listed as a dead letter, then replayed', async (t) => {
      const c = await setup(t, database);
      let up = false;
      const r = await receiver(t, c.clock, (_req, res) => res.writeHead(up ? 200 : 503).end());
      const ep = await c.endpoint(r.url);
      const other = await c.endpoint((await receiver(t, c.clock)).url, ['kyc.attested']);
      const eventId = await c.emit();
      const t0 = c.clock.now().getTime();
      for (const offset of RETRY_SCHEDULE_MS) assert.equal((await at(c, t0, offset)).attempted, 1, `attempt at +${offset} ms`);
      assert.equal((await at(c, t0, RETRY_SCHEDULE_MS[7]! + 3_600_000)).attempted, 0, 'no attempt after the last');
      assert.equal(r.received.length, 8);

      const dead = await c.deliveries('?status=dead');
      assert.equal(dead.length, 1);
      assert.equal(dead[0]?.event_id, eventId);
      assert.equal(dead[0]?.attempts.length, 8);
      assert.equal(dead[0]?.next_attempt_at, null);
      assert.equal((await c.deliveries(`?status=dead&endpoint_id=${ep.id}`)).length, 1);
      assert.equal((await c.deliveries(`?status=dead&endpoint_id=${other.id}`)).length, 0);
      const attemptTimes = dead[0]?.attempts.map((a: Json) => Date.parse(a.attempted_at) - t0);
      assert.deepEqual(attemptTimes, [...RETRY_SCHEDULE_MS]);

      up = true;
      const replay = await c.call('POST', `/v1/webhooks/deliveries/${dead[0]?.id}/replay`, undefined, { 'idempotency-key': crypto.randomUUID() });
      assert.equal(replay.status, 202);
      const replayed = (await replay.json()) as Json;
      assert.equal(replayed.status, 'pending');
      c.clock.advance(1000);
      assert.equal((await c.worker.runOnce()).attempted, 1);
      assert.equal(r.received.length, 9);
      const last = r.received[8] as Received;
      assert.equal(verify(last, ep.secret).id, eventId, 'same event id');
      assert.equal(last.headers['x-cauri-idempotency-key'], r.received[0]?.headers['x-cauri-idempotency-key'], 'same idempotency key');
      assert.notEqual(last.headers['x-cauri-signature'], r.received[7]?.headers['x-cauri-signature'], 'signed afresh');
      assert.equal(last.body, r.received[0]?.body);
      const done = (await (await c.call('GET', `/v1/webhooks/deliveries/${dead[0]?.id}`)).json()) as Json;
      assert.equal(done.status, 'succeeded');
      assert.equal(done.attempts.length, 9);

      // Only a dead delivery can be replayed.
      const again = await c.call('POST', `/v1/webhooks/deliveries/${dead[0]?.id}/replay`, undefined, { 'idempotency-key': crypto.randomUUID() });
      assert.equal(again.status, 409);
      assert.equal(((await again.json()) as Json).code, 'conflict');
    });

    test('replay-dead replays every dead delivery of one endpoint; a failed replay is dead again', async (t) => {
      const c = await setup(t, database);
      let up = false;
      const r = await receiver(t, c.clock, (_req, res) => res.writeHead(up ? 200 : 500).end());
      const ep = await c.endpoint(r.url);
      await c.emit();
      await c.emit();
      const t0 = c.clock.now().getTime();
      for (const offset of RETRY_SCHEDULE_MS) await at(c, t0, offset);
      assert.equal((await c.deliveries('?status=dead')).length, 2);
      const first = await c.call('POST', `/v1/webhooks/endpoints/${ep.id}/replay-dead`, undefined, { 'idempotency-key': crypto.randomUUID() });
      assert.equal(first.status, 202);
      assert.deepEqual(await first.json(), { endpoint_id: ep.id, replayed: 2 });
      assert.equal((await c.worker.runOnce()).attempted, 2);
      assert.equal((await c.deliveries('?status=dead')).length, 2, 'the replay failed: dead again');
      up = true;
      await c.call('POST', `/v1/webhooks/endpoints/${ep.id}/replay-dead`, undefined, { 'idempotency-key': crypto.randomUUID() });
      await c.worker.runOnce();
      assert.equal((await c.deliveries('?status=succeeded')).length, 2);
      assert.equal(r.received.length, 2 * 8 + 2 + 2);
    });

    test('secret rotation: two v1 values, new then old, for 24 hours; then only the new', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock);
      const ep = await c.endpoint(r.url);
      const rotated = await c.call('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, undefined, { 'idempotency-key': crypto.randomUUID() });
      assert.equal(rotated.status, 200);
      const body = (await rotated.json()) as Json;
      assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.notEqual(body.secret, ep.secret);
      assert.equal(Date.parse(body.previous_secret_expires_at) - c.clock.now().getTime(), 24 * 3600_000);
      await c.emit();
      await c.worker.runOnce();
      const during = r.received[0] as Received;
      const header = during.headers['x-cauri-signature'] as string;
      const [tPart, v1New, v1Old] = header.split(',');
      const t1 = tPart?.slice(2);
      const hmac = (secret: string) => createHmac('sha256', secret).update(`${t1}.${during.body}`).digest('hex');
      assert.equal(v1New, `v1=${hmac(body.secret)}`, 'new secret first');
      assert.equal(v1Old, `v1=${hmac(ep.secret)}`, 'old secret second');
      verify(during, body.secret);
      verify(during, ep.secret);

      c.clock.advance(24 * 3600_000 + 1);
      await c.emit();
      await c.worker.runOnce();
      const after = r.received[1] as Received;
      assert.match(after.headers['x-cauri-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/);
      verify(after, body.secret);
      assert.throws(() => verify(after, ep.secret));
    });

    test('a deleted endpoint\'s pending deliveries stop', async (t) => {
      const c = await setup(t, database);
      const r = await receiver(t, c.clock, (_req, res) => res.writeHead(500).end());
      const ep = await c.endpoint(r.url);
      await c.emit();
      await c.worker.runOnce();
      assert.equal((await c.call('DELETE', `/v1/webhooks/endpoints/${ep.id}`)).status, 204);
      for (const offset of RETRY_SCHEDULE_MS) await at(c, c.clock.now().getTime(), offset);
      assert.equal(r.received.length, 1);
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'cancelled');
    });

    test('pending deliveries resume on schedule after a restart', async (t) => {
      const c = await setup(t, database);
      let fail = true;
      const r = await receiver(t, c.clock, (_req, res) => res.writeHead(fail ? 500 : 200).end());
      await c.endpoint(r.url);
      await c.emit();
      const t0 = c.clock.now().getTime();
      await at(c, t0, 0);
      await at(c, t0, 0);
      await c.worker.stop();
      await c.runtime.close();

      // Another process of the same deployment: same database, same master key.
      const runtime = await startRuntimeIn(t, c.env);
      const webhooks = createWebhooks({
        config: runtime.config,
        storage: runtime.storage,
        clock: c.clock,
        masterKey: resolveMasterKey(runtime.config),
        idempotency: runtime.services.idempotency,
        cursors: new CursorCodec(Buffer.alloc(32)),
        log: runtime.app.log,
        options: { random: () => 0.5 },
      });
      const worker = createDeliveryWorker(webhooks);
      t.after(() => worker.stop());
      fail = false;
      assert.equal((await at(c, t0, 29_000, worker)).attempted, 0);
      assert.equal((await at(c, t0, 30_000, worker)).attempted, 1);
      assert.equal(r.received.length, 3);
      const row = await runtime.storage.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      assert.equal(row.status, 'succeeded');
      assert.equal(row.attempts, 3);
    });

    test('the running worker adds its deliveries to the listing index in batches on SQLite, the rest once idle; listings show every delivery all along', async (t) => {
      const c = await setup(t, database, {}, { listBatch: 10 });
      const slow = await receiver(t, c.clock, (_req, res) => setTimeout(() => res.writeHead(204).end(), 15));
      await c.endpoint(slow.url);
      for (let i = 0; i < 40; i++) await c.emit();
      const { db } = c.runtime.storage;
      const count = async (listed?: number) => {
        let query = db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'));
        if (listed !== undefined) query = query.where('listed', '=', listed);
        return Number((await query.executeTakeFirstOrThrow()).n);
      };
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      c.worker.start();
      let listedWhileBusy = 0;
      let unlistedSeen = 0;
      while (slow.received.length < 40) {
        const before = await count();
        const shown = (await c.deliveries('?limit=100')).length;
        const after = await count();
        assert.ok(before <= shown && shown <= after, `the listing showed ${shown} deliveries while ${before} to ${after} existed`);
        if (slow.received.length < 40) listedWhileBusy = Math.max(listedWhileBusy, await count(1));
        unlistedSeen = Math.max(unlistedSeen, await count(0));
        await sleep(5);
      }
      for (const deadline = performance.now() + 5000; (await count(1)) < 40 && performance.now() < deadline; ) await sleep(10);
      assert.equal(await count(1), 40, 'every delivery listed once the worker is idle');
      const all = (await db.selectFrom('webhook_deliveries').select('id').orderBy('id', 'desc').execute()).map((r) => r.id);
      assert.deepEqual(
        (await c.deliveries('?limit=100')).map((d) => d.id),
        all,
      );
      if (database.name === 'sqlite') {
        assert.ok(unlistedSeen > 0, 'deliveries waited to be listed');
        assert.ok(listedWhileBusy >= 10, `a batch of 10 was listed while deliveries were under way (${listedWhileBusy} listed then)`);
        assert.equal(c.worker.stats.list.units, 40);
        // Deliveries a previous run left unlisted are counted and listed by the next worker once it is idle.
        await c.worker.stop();
        await db.updateTable('webhook_deliveries').set({ listed: 0 }).where('id', 'in', all.slice(0, 5)).execute();
        const next = c.newWorker();
        next.start();
        for (const deadline = performance.now() + 5000; (await count(1)) < 40 && performance.now() < deadline; ) await sleep(10);
        assert.equal(await count(1), 40);
        assert.equal(next.stats.list.units, 5);
      } else {
        // Several workers share PostgreSQL, whose log takes index entries rather than pages: every delivery is created listed.
        assert.equal(unlistedSeen, 0);
        assert.equal(c.worker.stats.list.units, 0);
      }
    });

    test('a test event reaches its endpoint only, signed, and is stored with the livemode given', async (t) => {
      const c = await setup(t, database);
      const target = await receiver(t, c.clock);
      const bystander = await receiver(t, c.clock);
      const ep = await c.endpoint(target.url, ['order.created']);
      await c.endpoint(bystander.url, ['order.executed']);
      const res = await c.api.post(`/v1/webhooks/endpoints/${ep.id}/test`, { type: 'order.executed', livemode: true });
      assert.equal(res.status, 202);
      const created = (await res.json()) as Json;
      assert.equal(created.event.type, 'order.executed');
      assert.equal(created.event.livemode, true);
      await c.worker.runOnce();
      assert.equal(bystander.received.length, 0);
      assert.equal(target.received.length, 1);
      const event = verify(target.received[0] as Received, ep.secret);
      assert.equal(event.id, created.event.id);
      assert.equal(event.livemode, true);
      assert.deepEqual(Object.keys(event.data).sort(), ['average_fill_price_cents', 'exchange_ref', 'executed_at', 'fill_price_cents', 'fill_qty', 'filled_qty', 'instrument', 'order_id', 'rcpt_to', 'side', 'status']);
      const defaulted = await c.api.post(`/v1/webhooks/endpoints/${ep.id}/test`, {});
      assert.equal(((await defaulted.json()) as Json).event.type, 'webhook.test');
    });
  });
}

describe('webhook delivery in production', () => {
  const database = DATABASES[0] as DatabaseCase;
  const production = { CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.cauri.example' };

  test('private, loopback and link-local receivers are refused at registration', async (t) => {
    const c = await setup(t, database, production);
    for (const url of ['https://127.0.0.1/hooks', 'https://10.0.0.1/hooks', 'https://169.254.169.254/latest', 'https://[::1]/hooks', 'https://localhost/hooks', 'https://2130706433/']) {
      const res = await c.api.post('/v1/webhooks/endpoints', { url, events: ['order.created'] });
      assert.equal(res.status, 422, url);
      const body = (await res.json()) as Json;
      assert.deepEqual([body.details[0].field, body.details[0].rule], ['url', 'private_address'], url);
    }
    const plain = await c.api.post('/v1/webhooks/endpoints', { url: 'http://hooks.example.com/', events: ['order.created'] });
    assert.equal(((await plain.json()) as Json).details[0].rule, 'https_required');
  });

  test('at delivery time, a name resolving to a private address and literal private addresses are refused without connecting', async (t) => {
    const c = await setup(t, database, production, {
      resolve: async (hostname) => [{ address: hostname === 'rebound.example.com' ? '127.0.0.1' : '93.184.215.14', family: 4 }],
    });
    const r = await receiver(t, c.clock);
    const port = new URL(r.url).port;
    // Registered while the name pointed elsewhere; it now resolves to loopback.
    const rebound = await c.endpoint(`https://rebound.example.com:${port}/hooks`);
    // Rows as an older rule set might have left them: only the delivery-time check stands in the way.
    const literals = ['https://127.0.0.1:PORT/', 'https://10.0.0.1/', 'https://169.254.169.254/', 'https://[::1]:PORT/'].map((u) => u.replace('PORT', port));
    for (const url of literals) {
      const ep = await c.endpoint('https://hooks.example.com/placeholder');
      await c.runtime.storage.db.updateTable('webhook_endpoints').set({ url }).where('id', '=', ep.id).execute();
    }
    await c.emit();
    const report = await c.worker.runOnce();
    assert.equal(report.attempted, 5);
    assert.equal(r.received.length, 0, 'nothing reached the loopback receiver');
    const deliveries = await c.deliveries();
    assert.equal(deliveries.length, 5);
    for (const d of deliveries) {
      assert.equal(d.attempts[0].status_code, null);
      assert.match(d.attempts[0].error, /^address refused/);
    }
    assert.match(deliveries.find((d) => d.endpoint_id === rebound.id)?.attempts[0].error, /rebound.example.com resolves to 127.0.0.1/);
  });

  test('with the system resolver, localhost is refused at delivery time', async (t) => {
    const c = await setup(t, database, production);
    const r = await receiver(t, c.clock);
    const ep = await c.endpoint('https://hooks.example.com/placeholder');
    await c.runtime.storage.db.updateTable('webhook_endpoints').set({ url: `https://localhost:${new URL(r.url).port}/hooks` }).where('id', '=', ep.id).execute();
    await c.emit();
    await c.worker.runOnce();
    assert.equal(r.received.length, 0);
    assert.match((await c.deliveries())[0]?.attempts[0].error, /address refused: localhost resolves to/);
  });
});

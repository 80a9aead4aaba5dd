import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { DATABASES } from '../support/harness.js';
import { apiClient } from '../support/api.js';
import { at, receiver, setup, verify, type Json, type Received } from './webhooks-delivery-support.js';

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
      assert.match(
        got.headers['x-cauri-idempotency-key'] as string,
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
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

    test("fan-out: only the owner's enabled endpoints subscribed to the type; broadcast events reach every client", async (t) => {
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
      assert.equal(
        (await stranger.post('/v1/webhooks/endpoints', { url: strangerReceiver.url, events: ['order.created', 'audit.snapshot'] })).status,
        201,
      );

      await c.emit('order.created');
      const { recordEvent } = await import('../../src/events/event.service.js');
      await c.runtime.storage.db
        .transaction()
        .execute((trx) =>
          recordEvent(trx, { clientId: null, type: 'audit.snapshot', data: { date: '2026-11-21' }, livemode: false, at: c.clock.now() }),
        );
      await c.worker.runOnce();
      assert.deepEqual(
        subscribed.received.map((r) => JSON.parse(r.body).type),
        ['order.created', 'audit.snapshot'],
      );
      assert.equal(other.received.length, 0);
      assert.equal(disabled.received.length, 0);
      assert.deepEqual(
        strangerReceiver.received.map((r) => JSON.parse(r.body).type),
        ['audit.snapshot'],
      );
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
      assert.equal(
        new Set(r.received.map((x) => x.headers['x-cauri-signature'])).size,
        3,
        'signed anew: the two immediate attempts share t',
      );
      for (const x of r.received) verify(x, ep.secret);
      assert.deepEqual(
        r.received.map((x) => Number(/^t=(\d+)/.exec(x.headers['x-cauri-signature'] as string)?.[1])),
        [0, 0, 30_000, 300_000].map((offset) => Math.floor((t0 + offset) / 1000)),
      );
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(
        delivery?.attempts.map((a: Json) => a.status_code),
        [500, 500, 500, 204],
      );
      assert.deepEqual(
        delivery?.attempts.map((a: Json) => a.error),
        ['HTTP 500', 'HTTP 500', 'HTTP 500', null],
      );
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
      await c.runtime.storage.db
        .updateTable('webhook_deliveries')
        .set({ lease_owner: 'a-dead-worker', lease_until: start + 60_000 })
        .execute();
      assert.deepEqual(await at(c, start, 59_999), { dispatched: 0, attempted: 0 });
      assert.equal(r.received.length, 0);
      assert.deepEqual(await at(c, start, 60_000), { dispatched: 0, attempted: 1 });
      assert.equal(r.received.length, 1);
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(
        delivery?.attempts.map((a: Json) => a.status_code),
        [200],
      );
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
      for (const deadline = performance.now() + 5000; r.received.length === 0 && performance.now() < deadline; )
        await new Promise((x) => setTimeout(x, 10));
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
      assert.deepEqual(
        stored.map((m) => m.body),
        [first.body],
      );
      const [delivery] = await c.deliveries();
      assert.equal(delivery?.status, 'succeeded');
      assert.deepEqual(
        delivery?.attempts.map((x: Json) => x.status_code),
        [200],
        'the attempt that was never recorded stays unrecorded',
      );
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
      for (const deadline = performance.now() + 5000; r.received.length < 2 && performance.now() < deadline; )
        await new Promise((x) => setTimeout(x, 10));
      await a.stop();
      assert.equal(r.received.length, 2);
      assert.equal(r.received[1]?.body, r.received[0]?.body);
      const stored = await c.runtime.storage.db.selectFrom('webhook_messages').select('body').where('event_id', '=', eventId).execute();
      assert.deepEqual(
        stored.map((m) => m.body),
        [r.received[0]?.body],
      );
      const [delivery] = await c.deliveries();
      assert.deepEqual(
        delivery?.attempts.map((x: Json) => x.status_code),
        [503, 200],
      );
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
      for (const step of ['fan_out', 'record', 'commit'])
        assert.ok((metric(text, `cauri_webhook_worker_seconds_total{step="${step}"}`) ?? 0) > 0, step);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { DATABASES, startRuntimeIn } from '../support/harness.js';
import { at, receiver, setup, verify, type Json, type Received } from './webhooks-delivery-support.js';
import { startDeliveryWorker } from '../support/delivery-worker.js';

for (const database of DATABASES) {
  describe(`webhook delivery on ${database.name}: failures, dead letters, rotation and listing`, () => {
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
      const replay = await c.call('POST', `/v1/webhooks/deliveries/${dead[0]?.id}/replay`, undefined, {
        'idempotency-key': crypto.randomUUID(),
      });
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
      const again = await c.call('POST', `/v1/webhooks/deliveries/${dead[0]?.id}/replay`, undefined, {
        'idempotency-key': crypto.randomUUID(),
      });
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
      const first = await c.call('POST', `/v1/webhooks/endpoints/${ep.id}/replay-dead`, undefined, {
        'idempotency-key': crypto.randomUUID(),
      });
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
      const rotated = await c.call('POST', `/v1/webhooks/endpoints/${ep.id}/rotate-secret`, undefined, {
        'idempotency-key': crypto.randomUUID(),
      });
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

    test("a deleted endpoint's pending deliveries stop", async (t) => {
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
      const worker = startDeliveryWorker(t, runtime, c.clock);
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
      // 45: four batches of 10 while busy, and 5 left for the worker to list once idle.
      for (let i = 0; i < 45; i++) await c.emit();
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
      while (slow.received.length < 45) {
        const before = await count();
        const shown = (await c.deliveries('?limit=100')).length;
        const after = await count();
        assert.ok(before <= shown && shown <= after, `the listing showed ${shown} deliveries while ${before} to ${after} existed`);
        if (slow.received.length < 45) listedWhileBusy = Math.max(listedWhileBusy, await count(1));
        unlistedSeen = Math.max(unlistedSeen, await count(0));
        await sleep(5);
      }
      // The last deliveries wait for the worker to be idle to be listed: seen here even if every sample above missed one.
      unlistedSeen = Math.max(unlistedSeen, await count(0));
      for (const deadline = performance.now() + 5000; (await count(1)) < 45 && performance.now() < deadline; ) await sleep(10);
      assert.equal(await count(1), 45, 'every delivery listed once the worker is idle');
      const all = (await db.selectFrom('webhook_deliveries').select('id').orderBy('id', 'desc').execute()).map((r) => r.id);
      assert.deepEqual(
        (await c.deliveries('?limit=100')).map((d) => d.id),
        all,
      );
      if (database.name === 'sqlite') {
        assert.ok(unlistedSeen > 0, 'deliveries waited to be listed');
        assert.ok(listedWhileBusy >= 10, `a batch of 10 was listed while deliveries were under way (${listedWhileBusy} listed then)`);
        assert.equal(c.worker.stats.list.units, 45);
        // Deliveries a previous run left unlisted are counted and listed by the next worker once it is idle.
        await c.worker.stop();
        await db.updateTable('webhook_deliveries').set({ listed: 0 }).where('id', 'in', all.slice(0, 5)).execute();
        const next = c.newWorker();
        next.start();
        for (const deadline = performance.now() + 5000; (await count(1)) < 45 && performance.now() < deadline; ) await sleep(10);
        assert.equal(await count(1), 45);
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
      assert.deepEqual(Object.keys(event.data).sort(), [
        'average_fill_price_cents',
        'exchange_ref',
        'executed_at',
        'fill_price_cents',
        'fill_qty',
        'filled_qty',
        'instrument',
        'order_id',
        'rcpt_to',
        'side',
        'status',
      ]);
      const defaulted = await c.api.post(`/v1/webhooks/endpoints/${ep.id}/test`, {});
      assert.equal(((await defaulted.json()) as Json).event.type, 'webhook.test');
    });
  });
}

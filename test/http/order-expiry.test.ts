import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { claimExpiredOrders } from '../../src/orders/order.repository.js';
import { ExpiryWorker } from '../../src/workers/expiry-worker.js';
import { DATABASES, startRuntimeIn } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');

// Time in force and expiry, over HTTP, on both databases. The clock starts on Monday 2026-11-23 at
// 10:00 UTC; the BRVM's calendar (the one the repository ships) closes at 15:00 UTC on an ordinary
// day, and has no holiday from 23 to 30 November 2026.
for (const database of DATABASES) {
  describe(`time in force and expiry on ${database.name}`, () => {
    test('each time in force is echoed with its expiry; expire_date is checked', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const resting = {
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        limit_price_cents: KOLA_RESTING,
      };
      const cases: [Json, string | null][] = [
        [{}, '2026-11-23T15:00:00.000Z'],
        [{ time_in_force: 'day' }, '2026-11-23T15:00:00.000Z'],
        [{ time_in_force: 'gtc' }, null],
        [{ time_in_force: 'gtd', expire_date: '2026-11-25' }, '2026-11-25T15:00:00.000Z'],
        [{ time_in_force: 'gtd', expire_date: '2026-11-28' }, '2026-11-29T00:00:00.000Z'],
      ];
      for (const [fields, expiresAt] of cases) {
        const { res, body } = await c.order({ ...resting, ...fields });
        assert.equal(res.status, 201, JSON.stringify(body));
        assert.equal(body.time_in_force, fields.time_in_force ?? 'day');
        assert.equal(body.expire_date, fields.expire_date ?? null);
        assert.equal(body.expires_at, expiresAt, JSON.stringify(fields));
        assert.equal(body.cancel_reason, null);
        assert.equal(body.pending_request, null);
      }
      const before = await c.runtime.storage.db.selectFrom('orders').select('id').execute();
      const bad: Json[] = [
        { time_in_force: 'gtd' },
        { time_in_force: 'gtd', expire_date: '2026-11-22' },
        { time_in_force: 'gtd', expire_date: '2027-11-24' },
        { time_in_force: 'gtd', expire_date: '2026-11-31' },
        { time_in_force: 'gtd', expire_date: '23/11/2026' },
        { expire_date: '2026-11-25' },
        { time_in_force: 'ioc', expire_date: '2026-11-25' },
      ];
      for (const fields of bad) {
        const { res, body } = await c.order({ ...resting, ...fields });
        assert.equal(res.status, 422, JSON.stringify(fields));
        assert.deepEqual(
          body.details.map((d: Json) => [d.field, d.rule]),
          [['expire_date', 'expire_date']],
          JSON.stringify(body),
        );
      }
      const wrongKind = await c.order({ ...resting, time_in_force: 'fak' });
      assert.equal(wrongKind.res.status, 422);
      assert.deepEqual(
        wrongKind.body.details.map((d: Json) => [d.field, d.rule]),
        [['time_in_force', 'enum']],
      );
      assert.equal((await c.runtime.storage.db.selectFrom('orders').select('id').execute()).length, before.length, 'nothing stored');
      const lastDay = await c.order({ ...resting, time_in_force: 'gtd', expire_date: '2027-11-23' });
      assert.equal(lastDay.res.status, 201, 'a year ahead is allowed');
    });

    test('ioc and fok, market or limit: what executes at once, the rest cancelled unfilled, one order.cancelled each', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy' };
      const iocPartial = await c.order({ ...base, qty: 7777, time_in_force: 'ioc' });
      const iocFull = await c.order({ ...base, qty: 10, time_in_force: 'ioc' });
      const fokKilled = await c.order({ ...base, qty: 3000, time_in_force: 'fok' });
      const fokFilled = await c.order({ ...base, qty: 10, time_in_force: 'fok', limit_price_cents: 1_565_500 });
      const iocNothing = await c.order({ ...base, qty: 10, time_in_force: 'ioc', limit_price_cents: KOLA_RESTING });
      for (const o of [iocPartial, iocFull, fokKilled, fokFilled, iocNothing]) {
        assert.equal(o.res.status, 201, JSON.stringify(o.body));
        assert.equal(o.body.expires_at, null);
      }
      await c.tick(10);
      const expect: [Json, string, number, string | null][] = [
        [iocPartial, 'cancelled', 1111, 'unfilled'],
        [iocFull, 'filled', 10, null],
        [fokKilled, 'cancelled', 0, 'unfilled'],
        [fokFilled, 'filled', 10, null],
        [iocNothing, 'cancelled', 0, 'unfilled'],
      ];
      for (const [o, status, filled, reason] of expect) {
        const now = await c.get(o.body.id);
        assert.deepEqual([now.status, now.filled_qty, now.cancel_reason], [status, filled, reason], o.body.time_in_force);
        assert.equal((await c.events('order.cancelled', o.body.id)).length, status === 'cancelled' ? 1 : 0);
      }
      const [cancelled] = await c.events('order.cancelled', iocPartial.body.id);
      assert.deepEqual([cancelled?.status, cancelled?.cancel_reason, cancelled?.filled_qty], ['cancelled', 'unfilled', 1111]);
      await c.tick(60_000);
      assert.equal((await c.events('order.cancelled')).length, 3, 'once each');
    });

    test('a day order expires at the close, a gtd one at the close of its date, a gtc one never; each once', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const resting = {
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        limit_price_cents: KOLA_RESTING,
      };
      const day = (await c.order(resting)).body;
      const partial = (await c.order({ ...resting, qty: 7777, limit_price_cents: undefined })).body;
      const gtd = (await c.order({ ...resting, time_in_force: 'gtd', expire_date: '2026-11-25' })).body;
      const gtc = (await c.order({ ...resting, time_in_force: 'gtc' })).body;
      const filled = (await c.order({ ...resting, limit_price_cents: undefined })).body;
      await c.tick(2000);
      assert.equal((await c.get(partial.id)).status, 'partially_filled');
      assert.equal((await c.get(filled.id)).status, 'filled');

      c.clock.set('2026-11-23T14:59:59.999Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 0, 'not before the close');
      c.clock.set('2026-11-23T15:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 2);
      for (const o of [day, partial]) {
        const now = await c.get(o.id);
        assert.deepEqual([now.status, now.cancel_reason, now.pending_request], ['cancelled', 'expired', null]);
        const events = await c.events('order.cancelled', o.id);
        assert.equal(events.length, 1);
        assert.equal(events[0]?.cancel_reason, 'expired');
      }
      assert.equal((await c.get(partial.id)).filled_qty, 1111, 'what filled stays filled');
      assert.equal((await c.get(filled.id)).status, 'filled', 'a final order does not expire');
      assert.equal(await c.runtime.services.expiry.expireDue(), 0, 'nothing twice');

      c.clock.set('2026-11-25T15:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 1);
      assert.deepEqual([(await c.get(gtd.id)).status, (await c.get(gtd.id)).cancel_reason], ['cancelled', 'expired']);
      c.clock.set('2027-11-25T15:00:00.000Z');
      await c.tick(0);
      assert.equal(await c.runtime.services.expiry.expireDue(), 0);
      assert.equal((await c.get(gtc.id)).status, 'routed');
      assert.equal((await c.events('order.cancelled')).length, 3);
    });

    test('placed after the close or on a weekend, a day order waits for the next session and expires at its close', async (t) => {
      const c = await orderContext(t, database, '2026-11-28T11:00:00.000Z');
      const att = await c.attestation();
      const { body } = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        limit_price_cents: KOLA_RESTING,
      });
      assert.equal(body.expires_at, '2026-11-30T15:00:00.000Z', 'Saturday: Monday');
      c.clock.set('2026-11-30T14:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 0);
      c.clock.set('2026-11-30T16:00:00.000Z');
      // The worker's pass, as its loop runs it.
      await new ExpiryWorker(c.runtime.services.expiry, c.runtime.app.log).tick();
      assert.deepEqual([(await c.get(body.id)).status, (await c.get(body.id)).cancel_reason], ['cancelled', 'expired']);
    });

    test("on the eve of a holiday a day order expires at the early close (12:00 UTC); after it, at the next open day's close", async (t) => {
      // Thursday 24 December 2026: the BRVM closes at 12:00 UTC; Christmas and a weekend follow.
      const c = await orderContext(t, database, '2026-12-24T10:00:00.000Z');
      const att = await c.attestation();
      const resting = {
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        limit_price_cents: KOLA_RESTING,
      };
      const morning = (await c.order(resting)).body;
      assert.equal(morning.expires_at, '2026-12-24T12:00:00.000Z');
      const christmas = (await c.order({ ...resting, time_in_force: 'gtd', expire_date: '2026-12-25' })).body;
      assert.equal(christmas.expires_at, '2026-12-26T00:00:00.000Z', 'a holiday: the end of the day');
      c.clock.set('2026-12-24T11:59:59.999Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 0, 'not before the early close');
      c.clock.set('2026-12-24T12:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 1);
      assert.deepEqual([(await c.get(morning.id)).status, (await c.get(morning.id)).cancel_reason], ['cancelled', 'expired']);

      c.clock.set('2026-12-24T12:30:00.000Z');
      const afternoon = (await c.order(resting)).body;
      assert.equal(afternoon.expires_at, '2026-12-28T15:00:00.000Z', 'Monday 28, past Christmas and the weekend');
      c.clock.set('2026-12-26T00:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 1, 'the gtd order only');
      assert.equal((await c.get(afternoon.id)).status, 'routed');
      c.clock.set('2026-12-28T15:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 1);
      assert.deepEqual([(await c.get(afternoon.id)).status, (await c.get(afternoon.id)).cancel_reason], ['cancelled', 'expired']);
    });

    test('a partner that reports the expiry itself gives the same result, once; a cancel waiting keeps its reason', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy' };
      const byExchange = (await c.order({ ...base, qty: 504 })).body;
      await c.tick(1500);
      const now = await c.get(byExchange.id);
      assert.deepEqual([now.status, now.cancel_reason], ['cancelled', 'expired']);
      c.clock.set('2026-11-23T16:00:00.000Z');
      assert.equal(await c.runtime.services.expiry.expireDue(), 0, 'a final order left the expiry queue');
      assert.equal((await c.events('order.cancelled', byExchange.id)).length, 1);

      // A cancel the partner answers later is waiting when the session closes: it goes on, as requested.
      c.clock.set('2026-11-24T14:59:59.000Z');
      const later = (await c.order({ ...base, qty: 202, limit_price_cents: KOLA_RESTING })).body;
      assert.equal((await c.post(`/v1/orders/${later.id}/cancel`, {})).status, 202);
      await c.tick(1000);
      assert.equal(await c.runtime.services.expiry.expireDue(), 0);
      await c.tick(3000);
      const done = await c.get(later.id);
      assert.deepEqual([done.status, done.cancel_reason], ['cancelled', 'requested']);
      assert.equal((await c.events('order.cancelled', later.id)).length, 1);
    });

    test('expiry exactly once across a restart: claimed by a process that stops before asking the partner, finished by the next', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const ids: string[] = [];
      for (let i = 0; i < 4; i++)
        ids.push(
          (
            await c.order({
              rcpt_to: BAOBAB,
              kyc_attestation_id: att,
              instrument: 'KOLA.BRVM',
              side: 'buy',
              qty: 5 + i,
              limit_price_cents: KOLA_RESTING,
            })
          ).body.id,
        );
      c.clock.set('2026-11-23T15:00:01.000Z');
      // The first process claims the expiries and stops before sending a cancel (a crash).
      const { storage } = c.runtime;
      const claimed = await storage.transact((trx) => claimExpiredOrders(trx, storage.dialect, c.clock.now().getTime(), 30_000, 100));
      assert.deepEqual([...claimed].sort(), [...ids].sort());
      assert.equal((await c.get(ids[0] ?? '')).pending_request, 'pending_cancel', 'the order shows the cancel on its way');
      await c.runtime.close();

      const next = await startRuntimeIn(t, c.env);
      assert.equal(await next.services.expiry.expireDue(), 0, 'already claimed');
      await next.services.router.routeDue();
      assert.equal(
        (await next.storage.db.selectFrom('sandbox_journal').select('id').where('kind', '=', 'cancel').execute()).length,
        0,
        'the lease holds until it lapses',
      );
      c.clock.advance(30_000);
      await next.services.router.routeDue();
      for (let i = 0; i < 3; i++) {
        c.clock.advance(1000);
        await next.services.expiry.expireDue();
        await next.services.router.routeDue();
        await next.services.router.pollReports();
      }
      const rows = await next.storage.db.selectFrom('orders').select(['id', 'status', 'cancel_reason', 'pending_request']).execute();
      for (const row of rows)
        assert.deepEqual([row.status, row.cancel_reason, row.pending_request], ['cancelled', 'expired', null], row.id);
      const events = await next.storage.db.selectFrom('events').select('subject_ref').where('type', '=', 'order.cancelled').execute();
      assert.deepEqual(events.map((e) => e.subject_ref).sort(), [...ids].sort(), 'one order.cancelled per order');
      const cancels = await next.storage.db.selectFrom('sandbox_journal').select('order_id').where('kind', '=', 'cancel').execute();
      assert.deepEqual(cancels.map((e) => e.order_id).sort(), [...ids].sort(), 'one cancel sent per order');
    });

    test('expiry exactly once with two processes racing on one database', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const ids: string[] = [];
      for (let i = 0; i < 24; i++)
        ids.push(
          (
            await c.order({
              rcpt_to: BAOBAB,
              kyc_attestation_id: att,
              instrument: 'KOLA.BRVM',
              side: 'buy',
              qty: 100 + i,
              limit_price_cents: KOLA_RESTING,
            })
          ).body.id,
        );
      const other = await startRuntimeIn(t, c.env);
      c.clock.set('2026-11-23T15:00:00.000Z');
      const [a, b] = [c.runtime.services.router, other.services.router];
      let claimed = 0;
      const [ea, eb] = [c.runtime.services.expiry, other.services.expiry];
      const expire = async (expiry: typeof ea) => {
        const n = await expiry.expireDue(5);
        claimed += n;
      };
      await Promise.all([expire(ea), expire(eb), expire(ea), expire(eb), a.routeDue(), b.routeDue(), expire(ea), expire(eb)]);
      for (let i = 0; i < 3; i++) {
        c.clock.advance(1000);
        await Promise.all([expire(ea), expire(eb), a.routeDue(), b.routeDue(), a.pollReports(), b.pollReports()]);
      }
      assert.equal(claimed, ids.length, 'each claimed once');
      const { db } = c.runtime.storage;
      const events = await db.selectFrom('events').select('subject_ref').where('type', '=', 'order.cancelled').execute();
      assert.deepEqual(events.map((e) => e.subject_ref).sort(), [...ids].sort(), 'one order.cancelled per order');
      const cancels = await db.selectFrom('sandbox_journal').select('order_id').where('kind', '=', 'cancel').execute();
      assert.deepEqual(cancels.map((e) => e.order_id).sort(), [...ids].sort(), 'one cancel sent per order');
      const rows = await db.selectFrom('orders').select(['status', 'cancel_reason']).execute();
      assert.ok(rows.every((r) => r.status === 'cancelled' && r.cancel_reason === 'expired'));
    });
  });
}

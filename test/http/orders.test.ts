import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, startRuntimeIn } from '../support/harness.js';
import { BAOBAB, KYC3, setup, type Json } from './orders-support.js';

for (const database of DATABASES) {
  describe(`orders on ${database.name}`, () => {
    test('a market order is routed in the request, then filled near the reference price', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const { res, body } = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 10,
        client_metadata: { ref: 'A-1' },
        submitted_at: '2026-11-22T10:00:00Z',
      });
      assert.equal(res.status, 201);
      assert.equal(body.status, 'routed');
      assert.deepEqual(Object.keys(body).sort(), [
        'average_fill_price_cents',
        'cancel_reason',
        'client_metadata',
        'created_at',
        'currency',
        'expire_date',
        'expires_at',
        'failure_reason',
        'filled_qty',
        'id',
        'instrument',
        'kyc_attestation_id',
        'last_refusal',
        'limit_price_cents',
        'pending_changes',
        'pending_request',
        'qty',
        'rcpt_to',
        'side',
        'status',
        'time_in_force',
        'updated_at',
      ]);
      assert.equal(body.time_in_force, 'day', 'the default');
      assert.equal(body.limit_price_cents, null);
      assert.equal(body.currency, 'XOF');
      assert.equal(body.average_fill_price_cents, null);
      assert.deepEqual(body.client_metadata, { ref: 'A-1' });
      assert.match(body.created_at, /\.\d{3}Z$/);
      assert.deepEqual(
        (await c.events('order.created', body.id)).map((o) => o.status),
        ['created'],
      );
      assert.deepEqual(
        (await c.events('order.routed', body.id)).map((o) => o.status),
        ['routed'],
      );

      await c.tick(1500);
      const filled = await c.get(body.id);
      assert.equal(filled.status, 'filled');
      assert.equal(filled.filled_qty, 10);
      assert.ok(Math.abs(filled.average_fill_price_cents - 1_550_000) <= 15_500, String(filled.average_fill_price_cents));
      const executed = await c.events('order.executed', body.id);
      assert.equal(executed.length, 1);
      assert.deepEqual(Object.keys(executed[0] ?? {}).sort(), [
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
      assert.match(executed[0]?.exchange_ref, /^BRVM-\d{8}-\d{6}$/);
      // A second poll applies nothing again.
      await c.tick(5000);
      assert.equal((await c.events('order.executed', body.id)).length, 1);
    });

    test('a large order fills in several partial fills; the average is the weighted mean', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const { body } = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'CIMSN.BRVM', side: 'buy', qty: 3000 });
      assert.equal(body.status, 'routed');
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) {
        await c.tick(500);
        seen.add((await c.get(body.id)).status);
      }
      assert.ok(seen.has('partially_filled'), [...seen].join());
      const done = await c.get(body.id);
      assert.equal(done.status, 'filled');
      const fills = await c.events('order.executed', body.id);
      assert.ok(fills.length >= 3);
      assert.equal(
        fills.reduce((n, f) => n + f.fill_qty, 0),
        3000,
      );
      const notional = fills.reduce((n, f) => n + BigInt(f.fill_qty) * BigInt(f.fill_price_cents), 0n);
      assert.equal(done.average_fill_price_cents, Number((2n * notional + 3000n) / 6000n));
      let previous = 0;
      for (const f of fills) {
        assert.ok(f.filled_qty > previous, 'filled_qty never decreases');
        previous = f.filled_qty;
      }
    });

    test('test values: rejected, insufficient funds, suspended, resting limit, partial fill then cancel', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy' };
      const rejected = await c.order({ ...base, qty: 13 });
      assert.equal(rejected.res.status, 201, JSON.stringify(rejected.body));
      assert.equal(rejected.body.status, 'failed');
      assert.equal(rejected.body.failure_reason, 'sgi_rejected');
      assert.equal((await c.events('order.failed', rejected.body.id)).length, 1);
      const funds = await c.order({ ...base, qty: 402 });
      assert.equal(funds.body.failure_reason, 'insufficient_funds');

      const suspendedQty = await c.order({ ...base, qty: 451 });
      const suspendedInstrument = await c.order({ ...base, instrument: 'TRANS.BRVM', qty: 5 });
      assert.equal(suspendedQty.body.status, 'routed');
      assert.equal(suspendedInstrument.body.status, 'routed');
      await c.tick(1500);
      for (const o of [suspendedQty, suspendedInstrument]) {
        const now = await c.get(o.body.id);
        assert.equal(now.status, 'failed');
        assert.equal(now.failure_reason, 'instrument_suspended');
      }

      // A limit of 1 cent is inside no band: the test value works on an instrument without one (a fund).
      const resting = await c.order({ ...base, instrument: 'FCPEPA.BRVM', qty: 5, limit_price_cents: 1 });
      await c.tick(10 * 60_000);
      assert.equal((await c.get(resting.body.id)).status, 'routed', 'a limit that never crosses rests');
      const cancelled = await c.api.post(`/v1/orders/${resting.body.id}/cancel`, {});
      assert.equal(cancelled.status, 200);
      assert.equal(((await cancelled.json()) as Json).status, 'cancelled');

      const partial = await c.order({ ...base, qty: 7777 });
      await c.tick(1500);
      const half = await c.get(partial.body.id);
      assert.equal(half.status, 'partially_filled');
      assert.equal(half.filled_qty, 1111);
      const cancel = await c.api.post(`/v1/orders/${partial.body.id}/cancel`, {});
      const after = (await cancel.json()) as Json;
      assert.equal(after.status, 'cancelled');
      assert.equal(after.filled_qty, 1111);
      assert.notEqual(after.average_fill_price_cents, null);
      const again = await c.api.post(`/v1/orders/${partial.body.id}/cancel`, {});
      assert.equal(again.status, 409, 'a final order cannot be cancelled');
    });

    test('an unavailable partner: the order is created, retried in the background, routed once, also across a restart', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const { body } = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 503 });
      assert.equal(body.status, 'created', 'the partner did not take it within the request');
      await c.tick(6000);
      assert.equal((await c.get(body.id)).status, 'created', 'second attempt also refused');

      // The process stops; another one starts on the same database and finishes the job.
      await c.runtime.close();
      const restarted = await startRuntimeIn(t, c.env);
      for (let i = 0; i < 10; i++) {
        c.clock.advance(5000);
        await restarted.services.router.routeDue();
        await restarted.services.router.pollReports();
      }
      const order = await restarted.services.orders.get(restarted.storage.db, c.api.clientId as never, body.id);
      assert.equal(order.status, 'filled');
      const routedEvents = await restarted.storage.db
        .selectFrom('events')
        .select('id')
        .where('type', '=', 'order.routed')
        .where('subject_ref', '=', body.id)
        .execute();
      assert.equal(routedEvents.length, 1, 'routed exactly once');
    });

    test('an idempotent retry of POST /v1/orders returns the first answer and creates nothing', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const key = randomUUID();
      const request = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 2 };
      const first = await c.api.post('/v1/orders', request, key);
      const firstText = await first.text();
      assert.equal(JSON.parse(firstText).status, 'routed');
      const retry = await c.api.post('/v1/orders', request, key);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(await retry.text(), firstText, 'the stored answer is the routed one that was sent');
      const count = await c.runtime.storage.db.selectFrom('orders').select('id').execute();
      assert.equal(count.length, 1);
    });

    test('listing: newest first, filters, next and previous cursors', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        c.clock.advance(10);
        ids.push(
          (
            await c.order({
              rcpt_to: BAOBAB,
              kyc_attestation_id: att,
              instrument: i % 2 === 0 ? 'KOLA.BRVM' : 'CIMSN.BRVM',
              side: 'buy',
              qty: i === 3 ? 13 : 1,
            })
          ).body.id,
        );
      }
      const newestFirst = [...ids].reverse();
      const page1 = await c.api.call('GET', '/v1/orders?limit=3');
      assert.equal(page1.headers.get('x-cursor-prev'), '');
      assert.deepEqual(
        ((await page1.json()) as Json).data.map((o: Json) => o.id),
        newestFirst.slice(0, 3),
      );
      const page2 = await c.api.call('GET', `/v1/orders?limit=3&cursor=${encodeURIComponent(page1.headers.get('x-cursor-next') ?? '')}`);
      assert.deepEqual(
        ((await page2.json()) as Json).data.map((o: Json) => o.id),
        newestFirst.slice(3, 6),
      );
      const page3 = await c.api.call('GET', `/v1/orders?limit=3&cursor=${encodeURIComponent(page2.headers.get('x-cursor-next') ?? '')}`);
      assert.deepEqual(
        ((await page3.json()) as Json).data.map((o: Json) => o.id),
        newestFirst.slice(6),
      );
      assert.equal(page3.headers.get('x-cursor-next'), '');
      const back = await c.api.call('GET', `/v1/orders?limit=3&cursor=${encodeURIComponent(page3.headers.get('x-cursor-prev') ?? '')}`);
      assert.deepEqual(
        ((await back.json()) as Json).data.map((o: Json) => o.id),
        newestFirst.slice(3, 6),
      );
      const first = await c.api.call('GET', `/v1/orders?limit=3&cursor=${encodeURIComponent(back.headers.get('x-cursor-prev') ?? '')}`);
      assert.deepEqual(
        ((await first.json()) as Json).data.map((o: Json) => o.id),
        newestFirst.slice(0, 3),
      );
      assert.equal(first.headers.get('x-cursor-prev'), '');

      const failed = (await (await c.api.call('GET', '/v1/orders?status=failed')).json()) as Json;
      assert.deepEqual(
        failed.data.map((o: Json) => o.id),
        [ids[3]],
      );
      const cimsn = (await (await c.api.call('GET', '/v1/orders?instrument=CIMSN.BRVM')).json()) as Json;
      assert.equal(cimsn.data.length, 3);
      const window = (await (
        await c.api.call(
          'GET',
          `/v1/orders?created_gte=${encodeURIComponent((await c.get(ids[2] ?? '')).created_at)}&created_lt=${encodeURIComponent((await c.get(ids[5] ?? '')).created_at)}`,
        )
      ).json()) as Json;
      assert.deepEqual(
        window.data.map((o: Json) => o.id),
        [ids[4], ids[3], ids[2]],
      );
      // By attestation: its subject's orders are read, then the attestation's among them. A second
      // attestation of the same subject has none yet; one never issued to this client lists none.
      const sameSubject = await c.attestation();
      const other = await c.attestation({ ...KYC3, subject_id: 'qualified-2' });
      c.clock.advance(10);
      const theirs = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: other, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 })).body.id;
      const byAtt = async (id: string) =>
        ((await (await c.api.call('GET', `/v1/orders?kyc_attestation_id=${id}`)).json()) as Json).data.map((o: Json) => o.id);
      assert.deepEqual(await byAtt(att), newestFirst);
      assert.deepEqual(await byAtt(other), [theirs]);
      assert.deepEqual(await byAtt(sameSubject), []);
      assert.deepEqual(await byAtt('att_01jd0000000000000000000000'), []);
      const failedOfAtt = (await (await c.api.call('GET', `/v1/orders?kyc_attestation_id=${att}&status=failed`)).json()) as Json;
      assert.deepEqual(
        failedOfAtt.data.map((o: Json) => o.id),
        [ids[3]],
      );
      const badCursor = await c.api.call(
        'GET',
        `/v1/orders?status=failed&cursor=${encodeURIComponent(page1.headers.get('x-cursor-next') ?? '')}`,
      );
      assert.equal(badCursor.status, 422, 'a cursor is bound to its filters');
      assert.equal((await c.api.call('GET', '/v1/orders?status=lost')).status, 422);
    });
  });
}

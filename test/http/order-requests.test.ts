import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { apiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');
/** A KOLA.BRVM buy limit that the simulated price crosses at once (the top of its range, 1% over 15,500 XOF). */
const MARKETABLE = 1_565_500;
/** Another resting limit, inside the band: a resting order's amend can move it there and stay resting. */
const KOLA_RESTING_2 = KOLA_RESTING + 250;

/** The stored order row and its events, to check that a refusal changed nothing. */
async function snapshot(c: OrderContext, id: string): Promise<string> {
  const row = await c.runtime.storage.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  const events = await c.runtime.storage.db.selectFrom('events').select(['id', 'type']).where('subject_ref', '=', id).execute();
  return JSON.stringify({ row, events });
}

// Cancels and amends reaching the partner (200 when it answered in the request, 202 when it answers
// later), and the fills route, over HTTP, on both databases.
for (const database of DATABASES) {
  describe(`cancel, amend and fills on ${database.name}`, () => {
    test('cancel: 200 when the partner answers at once, 202 with pending_cancel when it answers later; order.cancelled once', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', limit_price_cents: KOLA_RESTING };
      const now = (await c.order({ ...base, qty: 5 })).body;
      const answered = await c.post(`/v1/orders/${now.id}/cancel`, {});
      assert.equal(answered.status, 200);
      assert.deepEqual(
        [answered.body.status, answered.body.cancel_reason, answered.body.pending_request],
        ['cancelled', 'requested', null],
      );

      const later = (await c.order({ ...base, qty: 202 })).body;
      const key = randomUUID();
      const pending = await c.post(`/v1/orders/${later.id}/cancel`, {}, key);
      assert.equal(pending.status, 202);
      assert.deepEqual([pending.body.status, pending.body.pending_request, pending.body.cancel_reason], ['routed', 'pending_cancel', null]);
      const replay = await c.post(`/v1/orders/${later.id}/cancel`, {}, key);
      assert.deepEqual([replay.status, replay.replayed, replay.body], [202, true, pending.body]);
      const again = await c.post(`/v1/orders/${later.id}/cancel`, {});
      assert.deepEqual([again.status, again.body.pending_request], [202, 'pending_cancel'], 'asking again while it waits');
      assert.equal((await c.get(later.id)).pending_request, 'pending_cancel');
      await c.tick(3000);
      const done = await c.get(later.id);
      assert.deepEqual([done.status, done.cancel_reason, done.pending_request], ['cancelled', 'requested', null]);
      for (const o of [now, later]) assert.equal((await c.events('order.cancelled', o.id)).length, 1);
      const [event] = await c.events('order.cancelled', later.id);
      assert.deepEqual([event?.status, event?.cancel_reason], ['cancelled', 'requested']);
      assert.equal((await c.post(`/v1/orders/${later.id}/cancel`, {})).status, 409, 'a final order');
    });

    test('cancel refused because the order filled meanwhile: in the request (200) and later (202), visible on the order and in its events', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy' };
      // Filled at the partner, not yet read by the router: the partner refuses, the router reads the fill.
      const filled = (await c.order({ ...base, qty: 10 })).body;
      c.clock.advance(1500);
      const refused = await c.post(`/v1/orders/${filled.id}/cancel`, {});
      assert.equal(refused.status, 200);
      assert.deepEqual(
        [refused.body.status, refused.body.filled_qty, refused.body.pending_request, refused.body.cancel_reason],
        ['filled', 10, null, null],
      );
      assert.deepEqual([refused.body.last_refusal?.request, refused.body.last_refusal?.reason], ['cancel', 'already_filled']);

      // The partner takes the cancel, then the order fills before it answers.
      const racing = (await c.order({ ...base, qty: 202 })).body;
      c.clock.advance(500);
      const pending = await c.post(`/v1/orders/${racing.id}/cancel`, {});
      assert.deepEqual([pending.status, pending.body.pending_request], [202, 'pending_cancel']);
      await c.tick(1000);
      await c.tick(5000);
      const after = await c.get(racing.id);
      assert.deepEqual([after.status, after.filled_qty, after.pending_request, after.cancel_reason], ['filled', 202, null, null]);
      assert.deepEqual([after.last_refusal?.request, after.last_refusal?.reason], ['cancel', 'already_filled']);
      for (const o of [filled, racing]) {
        assert.equal((await c.events('order.cancelled', o.id)).length, 0);
        const refusals = await c.events('order.request_refused', o.id);
        assert.equal(refusals.length, 1);
        assert.equal(refusals[0]?.last_refusal.reason, 'already_filled');
        assert.equal((await c.events('order.executed', o.id)).length, 1);
      }
    });

    test('amend: new values in the request (200, order.amended), a refusal (200, last_refusal), an answer later (202, pending_amend)', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', limit_price_cents: KOLA_RESTING };
      const o = (await c.order({ ...base, qty: 10 })).body;
      const key = randomUUID();
      const bigger = await c.post(`/v1/orders/${o.id}/amend`, { qty: 20 }, key);
      assert.equal(bigger.status, 200, JSON.stringify(bigger.body));
      assert.deepEqual(
        [bigger.body.qty, bigger.body.limit_price_cents, bigger.body.pending_request, bigger.body.status],
        [20, KOLA_RESTING, null, 'routed'],
      );
      const replay = await c.post(`/v1/orders/${o.id}/amend`, { qty: 20 }, key);
      assert.deepEqual([replay.status, replay.replayed, replay.body], [200, true, bigger.body]);
      const amended = await c.events('order.amended', o.id);
      assert.deepEqual(
        amended.map((e) => e.qty),
        [20],
        'once, with the new values',
      );

      const refused = await c.post(`/v1/orders/${o.id}/amend`, { qty: 13 });
      assert.equal(refused.status, 200);
      assert.deepEqual(
        [refused.body.qty, refused.body.pending_request, refused.body.last_refusal?.request, refused.body.last_refusal?.reason],
        [20, null, 'amend', 'partner_refused'],
      );
      assert.equal((await c.events('order.request_refused', o.id)).length, 1);

      // A marketable limit: the order fills as a new one would.
      const marketable = await c.post(`/v1/orders/${o.id}/amend`, { limit_price_cents: MARKETABLE });
      assert.deepEqual([marketable.status, marketable.body.limit_price_cents], [200, MARKETABLE]);
      await c.tick(1500);
      assert.deepEqual([(await c.get(o.id)).status, (await c.get(o.id)).filled_qty], ['filled', 20]);
      assert.equal((await c.events('order.amended', o.id)).length, 2);

      const later = (await c.order({ ...base, qty: 202 })).body;
      const pending = await c.post(`/v1/orders/${later.id}/amend`, { qty: 300, limit_price_cents: KOLA_RESTING_2 });
      assert.equal(pending.status, 202);
      assert.deepEqual(
        [pending.body.qty, pending.body.pending_request, pending.body.pending_changes],
        [202, 'pending_amend', { qty: 300, limit_price_cents: KOLA_RESTING_2 }],
      );
      assert.equal((await c.post(`/v1/orders/${later.id}/amend`, { qty: 400 })).status, 409, 'one request at a time');
      await c.tick(3000);
      const done = await c.get(later.id);
      assert.deepEqual([done.qty, done.limit_price_cents, done.pending_request, done.pending_changes], [300, KOLA_RESTING_2, null, null]);
      assert.equal((await c.events('order.amended', later.id)).length, 1);
    });

    test('an amend races a fill: the fill wins, the amend is refused, the order stays as the partner reports it', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', limit_price_cents: MARKETABLE };
      // Filled at the partner before the amend reaches it.
      const quick = (await c.order({ ...base, qty: 10 })).body;
      c.clock.advance(1500);
      const late = await c.post(`/v1/orders/${quick.id}/amend`, { qty: 50 });
      assert.equal(late.status, 200);
      assert.deepEqual(
        [late.body.status, late.body.qty, late.body.filled_qty, late.body.last_refusal?.reason],
        ['filled', 10, 10, 'already_filled'],
      );
      // Taken by the partner, answered later; the fill comes first.
      const racing = (await c.order({ ...base, qty: 202 })).body;
      c.clock.advance(500);
      assert.equal((await c.post(`/v1/orders/${racing.id}/amend`, { qty: 400 })).status, 202);
      await c.tick(1000);
      await c.tick(5000);
      const after = await c.get(racing.id);
      assert.deepEqual(
        [after.status, after.qty, after.filled_qty, after.pending_request, after.last_refusal?.request, after.last_refusal?.reason],
        ['filled', 202, 202, null, 'amend', 'already_filled'],
      );
      for (const o of [quick, racing]) {
        assert.equal((await c.events('order.amended', o.id)).length, 0);
        assert.equal((await c.events('order.request_refused', o.id)).length, 1);
      }
    });

    test('amend refusals at the API: 409 for what cannot be amended, 422 for bad values; nothing stored changes', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy' };
      const resting = (await c.order({ ...base, qty: 10, limit_price_cents: KOLA_RESTING })).body;
      const market = (await c.order({ ...base, qty: 5202 })).body;
      const partial = (await c.order({ ...base, qty: 7777, limit_price_cents: MARKETABLE })).body;
      const cancelled = (await c.order({ ...base, qty: 10, limit_price_cents: KOLA_RESTING })).body;
      await c.post(`/v1/orders/${cancelled.id}/cancel`, {});
      const waiting = (await c.order({ ...base, qty: 202, limit_price_cents: KOLA_RESTING })).body;
      await c.post(`/v1/orders/${waiting.id}/cancel`, {});
      await c.tick(1500);
      assert.equal((await c.get(partial.id)).filled_qty, 1111);

      const cases: [string, string, Json, number, [string, string] | null][] = [
        ['empty body', resting.id, {}, 422, ['body', 'minProperties']],
        ['unknown member', resting.id, { qty: 20, side: 'sell' }, 422, ['side', 'additionalProperties']],
        ['qty 0', resting.id, { qty: 0 }, 422, ['qty', 'minimum']],
        ['limit as text', resting.id, { limit_price_cents: '5' }, 422, ['limit_price_cents', 'type']],
        ['nothing changes', resting.id, { qty: 10, limit_price_cents: KOLA_RESTING }, 422, ['qty', 'unchanged']],
        ['below the band', resting.id, { limit_price_cents: 1 }, 422, ['limit_price_cents', 'price_band']],
        ['not above filled', partial.id, { qty: 1111 }, 422, ['qty', 'above_filled']],
        ['a market order', market.id, { qty: 6000 }, 409, null],
        ['a cancelled order', cancelled.id, { qty: 20 }, 409, null],
        ['a cancel waiting', waiting.id, { qty: 300 }, 409, null],
        ['unknown order', 'ord_01kdvdna00zzzzzzzzzzzzzzzz', { qty: 20 }, 404, null],
        ['malformed id', 'nope', { qty: 20 }, 404, null],
      ];
      for (const [name, id, body, status, detail] of cases) {
        const before = await snapshot(c, id);
        const res = await c.post(`/v1/orders/${id}/amend`, body);
        assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, status === 422 ? 'validation_error' : status === 409 ? 'conflict' : 'not_found', name);
        if (detail !== null)
          assert.ok(
            res.body.details.some((d: Json) => d.field === detail[0] && d.rule === detail[1]),
            `${name}: ${JSON.stringify(res.body.details)}`,
          );
        assert.equal(await snapshot(c, id), before, `${name}: nothing stored changes`);
      }
      const noKey = await c.api.call('POST', `/v1/orders/${resting.id}/amend`, { qty: 20 });
      assert.equal(noKey.status, 422);
      const stranger = await apiClient(
        c.runtime,
        `http://127.0.0.1:${(c.runtime.app.server.address() as { port: number }).port}`,
        ['orders:read', 'orders:write'],
        'stranger',
      );
      assert.equal((await stranger.post(`/v1/orders/${resting.id}/amend`, { qty: 20 })).status, 404, "another client's order");
      const reader = await apiClient(
        c.runtime,
        `http://127.0.0.1:${(c.runtime.app.server.address() as { port: number }).port}`,
        ['orders:read'],
        'reader',
      );
      assert.equal((await reader.post(`/v1/orders/${resting.id}/amend`, { qty: 20 })).status, 403, 'orders:write is needed');
    });

    test('amend and the monthly cap: the increase counts, and a pending amend holds its room', async (t) => {
      const c = await orderContext(t, database);
      // KYC1: 10,000,000 cents a month.
      const lite = await c.attestation({
        subject_id: 'lite-1',
        level: 'KYC1',
        jurisdictions: ['UEMOA'],
        verifications: [
          { type: 'id_doc', verified_at: '2026-11-20T09:00:00Z' },
          { type: 'selfie', verified_at: '2026-11-20T09:01:00Z' },
        ],
      });
      // A fund (11,560 XOF) has no price band, so the limits below move the amounts freely; each of
      // them is under the fund's price, so the orders rest.
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: lite, instrument: 'FCPEPA.BRVM', side: 'buy' };
      const o = (await c.order({ ...base, qty: 2, limit_price_cents: 1_000_000 })).body; // 2,000,000 held
      const waiting = (await c.order({ ...base, qty: 202, limit_price_cents: 1 })).body; // 202 held
      const before = await snapshot(c, o.id);
      const over = await c.post(`/v1/orders/${o.id}/amend`, { qty: 11 }); // 9,000,000 more
      assert.equal(over.status, 422);
      assert.deepEqual(
        [over.body.details[0].field, over.body.details[0].rule, over.body.details[0].order_cents, over.body.details[0].remaining_cents],
        ['qty', 'monthly_cap', 9_000_000, 7_999_798],
      );
      assert.equal(await snapshot(c, o.id), before);
      const overByPrice = await c.post(`/v1/orders/${o.id}/amend`, { limit_price_cents: 6_000_000 });
      assert.deepEqual(
        [overByPrice.status, overByPrice.body.details[0].field, overByPrice.body.details[0].rule],
        [422, 'limit_price_cents', 'monthly_cap'],
      );
      assert.equal((await c.post(`/v1/orders/${o.id}/amend`, { qty: 9 })).status, 200, '9,000,202 held: within the cap');
      assert.equal((await c.post(`/v1/orders/${waiting.id}/amend`, { limit_price_cents: 10_000 })).status, 422, 'over by the increase');
      assert.equal((await c.post(`/v1/orders/${o.id}/amend`, { qty: 5 })).body.qty, 5, 'a decrease needs no room');
      // The partner answers this one later: while it waits, the order holds 4,040,000 rather than 202.
      assert.equal((await c.post(`/v1/orders/${waiting.id}/amend`, { limit_price_cents: 20_000 })).status, 202);
      const next = await c.order({ ...base, qty: 1, limit_price_cents: 1_000_000 });
      assert.equal(next.res.status, 422, 'the pending amend holds its room');
      assert.equal(next.body.details[0].rule, 'monthly_cap');
    });

    test('GET /v1/orders/{id}/fills: oldest first, amounts and fees, settlement three open days after the trade', async (t) => {
      const c = await orderContext(t, database, '2026-11-27T10:00:00.000Z'); // a Friday
      const att = await c.attestation();
      const buy = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'CIMSN.BRVM', side: 'buy', qty: 3000 })).body;
      const sell = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'sell', qty: 4 })).body;
      const none = (
        await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 4,
          limit_price_cents: KOLA_RESTING,
        })
      ).body;
      for (let i = 0; i < 20; i++) await c.tick(1000);
      const res = await c.api.call('GET', `/v1/orders/${buy.id}/fills`);
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: Json[] };
      const executed = await c.events('order.executed', buy.id);
      assert.ok(data.length >= 3);
      assert.equal(data.length, executed.length);
      data.forEach((fill, i) => {
        assert.deepEqual(Object.keys(fill).sort(), [
          'exchange_ref',
          'executed_at',
          'fee_schedules',
          'fees',
          'gross_cents',
          'id',
          'net_cents',
          'order_id',
          'price_cents',
          'qty',
          'settlement_date',
          'settlement_status',
        ]);
        assert.match(fill.id, /^fil_[0-9a-z]{26}$/);
        assert.equal(fill.order_id, buy.id);
        assert.deepEqual(
          [fill.qty, fill.price_cents, fill.exchange_ref, fill.executed_at],
          [executed[i]?.fill_qty, executed[i]?.fill_price_cents, executed[i]?.exchange_ref, executed[i]?.executed_at],
          'oldest first',
        );
        assert.equal(fill.gross_cents, fill.qty * fill.price_cents);
        // The sandbox partner's commission and the BRVM's fees (their amounts: test/http/post-trade.test.ts).
        assert.deepEqual(
          fill.fees.map((f: Json) => f.type),
          ['commission', 'exchange', 'depository', 'regulator', 'tax'],
        );
        assert.equal(fill.net_cents, fill.gross_cents + fill.fees.reduce((n: number, f: Json) => n + f.amount_cents, 0));
        assert.equal(fill.settlement_date, '2026-12-02', 'Friday T+3: Wednesday');
        assert.equal(fill.settlement_status, 'pending');
      });
      assert.equal(
        data.reduce((n, f) => n + f.qty, 0),
        3000,
      );
      assert.ok(data.every((f, i) => i === 0 || f.executed_at >= (data[i - 1]?.executed_at ?? '')));
      const sold = (await (await c.api.call('GET', `/v1/orders/${sell.id}/fills`)).json()) as { data: Json[] };
      assert.equal(sold.data.length, 1);
      assert.equal(
        sold.data[0]?.net_cents,
        sold.data[0]?.gross_cents - (sold.data[0]?.fees ?? []).reduce((n: number, f: Json) => n + f.amount_cents, 0),
      );
      assert.deepEqual(await (await c.api.call('GET', `/v1/orders/${none.id}/fills`)).json(), { data: [] });
      const base = `http://127.0.0.1:${(c.runtime.app.server.address() as { port: number }).port}`;
      const stranger = await apiClient(c.runtime, base, undefined, 'stranger');
      assert.equal((await stranger.call('GET', `/v1/orders/${buy.id}/fills`)).status, 404);
      assert.equal((await c.api.call('GET', '/v1/orders/ord_nope/fills')).status, 404);
    });

    test("settlement dates follow the exchange's calendar: holidays and weekends are skipped, an eve counts", async (t) => {
      // Wednesday 23 December 2026 on the BRVM: the 24th closes early, the 25th is Christmas.
      const c = await orderContext(t, database, '2026-12-23T10:00:00.000Z');
      const att = await c.attestation();
      const buy = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 4 };
      const wednesday = (await c.order(buy)).body;
      await c.tick(1500);
      c.clock.set('2026-12-24T10:00:00.000Z');
      const eve = (await c.order(buy)).body;
      await c.tick(1500);
      const settles = async (id: string) =>
        ((await (await c.api.call('GET', `/v1/orders/${id}/fills`)).json()) as { data: Json[] }).data.map((f) => f.settlement_date);
      assert.deepEqual(await settles(wednesday.id), ['2026-12-29'], 'T+3: the 24th, the 28th, the 29th');
      assert.deepEqual(await settles(eve.id), ['2026-12-30']);
    });

    test('the partner cancels on its own: cancel_reason partner; the new event types can be subscribed to', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const o = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 410 })).body;
      await c.tick(1500);
      const now = await c.get(o.id);
      assert.deepEqual([now.status, now.cancel_reason], ['cancelled', 'partner']);
      assert.equal((await c.events('order.cancelled', o.id)).length, 1);
      const endpoint = await c.post('/v1/webhooks/endpoints', {
        url: 'http://127.0.0.1:9/hooks',
        events: ['order.cancelled', 'order.amended', 'order.request_refused'],
      });
      assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
      assert.deepEqual(endpoint.body.events, ['order.cancelled', 'order.amended', 'order.request_refused']);
    });
  });
}

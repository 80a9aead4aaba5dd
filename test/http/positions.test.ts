import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { orderContext, type Json } from '../support/order-context.js';
import { BAOBAB, LAGUNE, MARKETABLE, SUBJECT, fillsOf, half, positions, referencePrice } from './positions-support.js';

for (const database of DATABASES) {
  describe(`positions on ${database.name}`, () => {
    test("buys, a partial fill and a sell: quantity, average cost, realised and unrealised profit, settled on each order's clock", async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM' };
      assert.deepEqual(await positions(c), [], 'nothing before the first fill');
      const market = (await c.order({ ...base, side: 'buy', qty: 10 })).body;
      const partial = (await c.order({ ...base, side: 'buy', qty: 7777, limit_price_cents: MARKETABLE })).body;
      await c.tick(1500);
      await c.tick(1500);
      assert.deepEqual([(await c.get(market.id)).status, (await c.get(partial.id)).filled_qty], ['filled', 1111]);
      const sale = (await c.order({ ...base, side: 'sell', qty: 5 })).body;
      await c.tick(1500);
      assert.equal((await c.get(sale.id)).status, 'filled');

      // The expected figures, from the fills the API shows, by the documented method.
      const bought = [...(await fillsOf(c, market.id)), ...(await fillsOf(c, partial.id))];
      const [sold] = await fillsOf(c, sale.id);
      const boughtQty = bought.reduce((n, f) => n + BigInt(f.qty), 0n);
      const boughtCost = bought.reduce((n, f) => n + BigInt(f.qty) * BigInt(f.price_cents), 0n);
      const soldCost = half(boughtCost * 5n, boughtQty);
      const qty = boughtQty - 5n;
      const cost = boughtCost - soldCost;
      const reference = BigInt(await referencePrice(c, 'KOLA.BRVM'));
      const [position] = await positions(c);
      assert.deepEqual(position, {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        instrument: 'KOLA.BRVM',
        currency: 'XOF',
        qty: 1116,
        settled_qty: 0,
        average_cost_cents: Number(half(cost, qty)),
        reference_price_cents: Number(reference),
        market_value_cents: Number(qty * reference),
        unrealised_pnl_cents: Number(qty * reference - cost),
        realised_pnl_cents: Number(5n * BigInt(sold?.price_cents) - soldCost),
        statement_as_of: null,
        updated_at: position?.updated_at,
      });
      assert.equal(half(cost, qty), half(boughtCost, boughtQty), 'the sell left the average as it was');

      // Monday's trades settle on Thursday: counted settled from 00:00 UTC that day, when their
      // fills' settlement_status becomes settled, and not a moment before.
      const settles = sold?.settlement_date as string;
      assert.equal(settles, '2026-11-26');
      assert.ok(bought.every((f) => f.settlement_date === settles));
      c.clock.set('2026-11-25T23:59:59.999Z');
      assert.equal((await positions(c))[0]?.settled_qty, 0, 'the day before its settlement date, not yet');
      assert.equal((await fillsOf(c, sale.id))[0]?.settlement_status, 'pending');
      c.clock.set(`${settles}T00:00:00.000Z`);
      assert.equal((await positions(c))[0]?.settled_qty, 1116, 'on its settlement date');
      assert.ok([...(await fillsOf(c, market.id)), ...(await fillsOf(c, sale.id))].every((f) => f.settlement_status === 'settled'));
    });

    test("an order on a test clock settles on the clock's time, not on real time", async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const clk = (await c.post('/v1/test-clocks', { frozen_time: '2026-11-23T10:00:00.000Z' })).body;
      await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 3 });
      const onClock = (
        await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 20, test_clock: clk.id })
      ).body;
      await c.tick(1500);
      assert.equal((await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T10:00:05.000Z' })).status, 200);
      assert.equal((await c.get(onClock.id)).status, 'filled');
      c.clock.set('2026-12-10T10:00:00.000Z');
      assert.deepEqual([(await positions(c))[0]?.qty, (await positions(c))[0]?.settled_qty], [23, 3], 'the clock still stands on Monday');
      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-27T09:00:00.000Z' });
      assert.equal((await positions(c))[0]?.settled_qty, 23);
    });

    test("GET /v1/positions: filters, pages in key order, scope, and only the client's own", async (t) => {
      const c = await orderContext(t, database);
      const holdings = (codes: string[]) => codes.map((instrument) => ({ instrument, qty: 7, average_cost_cents: 100_000 }));
      for (const [subject, partner, codes] of [
        ['inv-a', BAOBAB, ['KOLA.BRVM', 'ORAC.BRVM']],
        ['inv-a', LAGUNE, ['SNTS.BRVM']],
        ['inv-b', BAOBAB, ['KOLA.BRVM']],
      ] as const) {
        assert.equal(
          (
            await c.post('/v1/positions/statements', {
              subject_id: subject,
              rcpt_to: partner,
              as_of: '2026-11-20',
              holdings: holdings([...codes]),
            })
          ).status,
          201,
        );
      }
      const all = await positions(c);
      const keys = all.map((p) => `${p.subject_id} ${p.rcpt_to} ${p.instrument}`);
      assert.deepEqual(keys, [...keys].sort(), 'subject, partner, instrument');
      assert.equal(all.length, 4);
      assert.deepEqual((await positions(c, '?subject_id=inv-a')).map((p) => p.instrument).sort(), ['KOLA.BRVM', 'ORAC.BRVM', 'SNTS.BRVM']);
      assert.deepEqual(
        (await positions(c, `?subject_id=inv-a&rcpt_to=${LAGUNE}`)).map((p) => p.instrument),
        ['SNTS.BRVM'],
      );
      assert.deepEqual(
        (await positions(c, '?instrument=KOLA.BRVM')).map((p) => p.subject_id),
        ['inv-a', 'inv-b'],
      );
      assert.deepEqual(await positions(c, '?subject_id=nobody'), []);

      const seen: string[] = [];
      let cursor = '';
      for (;;) {
        const res = await c.api.call('GET', `/v1/positions?limit=3${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        seen.push(...((await res.json()) as { data: Json[] }).data.map((p) => `${p.subject_id} ${p.rcpt_to} ${p.instrument}`));
        cursor = res.headers.get('x-cursor-next') ?? '';
        if (cursor === '') break;
      }
      assert.deepEqual(seen, keys, 'three then one');
      assert.equal((await c.api.call('GET', '/v1/positions?cursor=forged')).status, 422);
      const first = await c.api.call('GET', '/v1/positions?limit=1');
      assert.equal(
        (
          await c.api.call(
            'GET',
            `/v1/positions?limit=1&subject_id=inv-b&cursor=${encodeURIComponent(first.headers.get('x-cursor-next') ?? '')}`,
          )
        ).status,
        422,
        'a cursor of other filters',
      );
      for (const bad of ['?limit=0', '?limit=201', '?instrument=kola', '?subject_id=a%20b', '?side=buy'])
        assert.equal((await c.api.call('GET', `/v1/positions${bad}`)).status, 422, bad);

      const port = (c.runtime.app.server.address() as { port: number }).port;
      const stranger = await apiClient(c.runtime, `http://127.0.0.1:${port}`, ['orders:read'], 'stranger');
      const res = await stranger.call('GET', '/v1/positions');
      assert.deepEqual([res.status, ((await res.json()) as { data: Json[] }).data], [200, []]);
      const kycOnly = await apiClient(c.runtime, `http://127.0.0.1:${port}`, ['kyc:read'], 'kyc only');
      assert.equal((await kycOnly.call('GET', '/v1/positions')).status, 403);
    });
  });
}

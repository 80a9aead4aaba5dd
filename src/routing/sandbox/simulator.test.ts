import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SANDBOX_INSTRUMENTS } from '../../partners/sandbox-seed.js';
import { instrumentFromImport } from '../../partners/instrument.service.js';
import { priceLimits } from '../../orders/core/price-rules.js';
import { averageFillPrice } from '../../orders/core/fills.js';
import { ConnectorUnavailableError } from '../connector.js';
import { FIRST_FILL_DELAY_MS, LARGE_ORDER_QTY, PRICE_PERIOD_MS, priceBand, priceRange, simulatedPriceCents } from './market.js';
import { EXCHANGE_REJECT_DELAY_MS, PARTIAL_THEN_REST_FILL_QTY, TEST_QTY, UNAVAILABLE_ATTEMPTS } from './test-values.js';
import { T0, KOLA, order, cancelRequest, setup, allReports, reportsOf, withinBand, MiniRouter } from './simulator.test-support.js';

test('qty 13: rejected sgi_rejected at hand-over, nothing after', async () => {
  const { clock, connector } = setup();
  const o = order('r13', { qty: TEST_QTY.SGI_REJECTED });
  const res = await connector.submit(o);
  assert.equal(res.status, 'rejected');
  assert.equal(res.report.type, 'rejected');
  assert.equal(res.status === 'rejected' && res.report.reason, 'sgi_rejected');
  assert.equal(res.report.seq, 1);
  clock.advance(3_600_000);
  assert.deepEqual(await reportsOf(connector, o.order_id), [res.report]);
  assert.deepEqual(await connector.cancel(o.order_id, cancelRequest(o.order_id)), { status: 'refused', reason: 'already_rejected' });
  assert.deepEqual(await connector.submit(o), res, 'a repeated submit returns the first outcome');
});

test('qty 402: rejected insufficient_funds at hand-over, also for a sell', async () => {
  const { connector } = setup();
  for (const side of ['buy', 'sell'] as const) {
    const res = await connector.submit(order(`r402${side}`, { qty: TEST_QTY.INSUFFICIENT_FUNDS, side }));
    assert.equal(res.status, 'rejected');
    assert.equal(res.status === 'rejected' && res.report.reason, 'insufficient_funds');
  }
});

test('qty 451 and suspended instruments: accepted, then rejected instrument_suspended by the exchange', async () => {
  const { clock, connector } = setup();
  const a = order('r451', { qty: TEST_QTY.INSTRUMENT_SUSPENDED });
  const trans = SANDBOX_INSTRUMENTS.find((i) => i.code === 'TRANS.BRVM');
  assert.equal(trans?.status, 'suspended');
  const b = order('trans', {
    instrument: 'TRANS.BRVM',
    instrument_status: 'suspended',
    reference_price_cents: trans?.reference_price_cents ?? 0,
    qty: 50,
  });
  const c = order('trans13', {
    instrument: 'SOLAR.GSE',
    instrument_status: 'suspended',
    reference_price_cents: 61_000,
    qty: TEST_QTY.SGI_REJECTED,
  });
  for (const o of [a, b, c]) assert.equal((await connector.submit(o)).status, 'accepted');
  clock.advance(EXCHANGE_REJECT_DELAY_MS - 1);
  for (const o of [a, b, c])
    assert.deepEqual(
      (await reportsOf(connector, o.order_id)).map((r) => r.type),
      ['accepted'],
    );
  clock.advance(1);
  for (const o of [a, b, c]) {
    const rs = await reportsOf(connector, o.order_id);
    assert.deepEqual(
      rs.map((r) => [r.type, r.seq, r.type === 'rejected' ? r.reason : null]),
      [
        ['accepted', 1, null],
        ['rejected', 2, 'instrument_suspended'],
      ],
      'suspension takes precedence over the other test values',
    );
    assert.equal(rs[1]?.occurred_at, '2026-11-22T10:00:01.000Z');
  }
  clock.advance(3_600_000);
  assert.equal((await allReports(connector)).length, 6, 'never a fill');
});

test(`qty 503: unavailable for ${UNAVAILABLE_ATTEMPTS} submits, then accepted and filled`, async () => {
  const { clock, connector } = setup();
  const o = order('r503', { qty: TEST_QTY.UNAVAILABLE });
  for (let i = 1; i <= UNAVAILABLE_ATTEMPTS; i++) {
    await assert.rejects(
      connector.submit(o),
      (err: unknown) => err instanceof ConnectorUnavailableError && err.code === 'connector_unavailable' && err.connector === 'sgi_sandbox',
    );
    assert.deepEqual(await allReports(connector), [], 'nothing happened at the partner');
    assert.deepEqual(await connector.cancel(o.order_id, cancelRequest(o.order_id)), { status: 'refused', reason: 'unknown_order' });
    clock.advance(30_000);
  }
  const res = await connector.submit(o);
  assert.equal(res.status, 'accepted');
  assert.deepEqual(await connector.submit(o), res, 'later submits are idempotent');
  clock.advance(FIRST_FILL_DELAY_MS);
  const rs = await reportsOf(connector, o.order_id);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'fill'],
  );
  assert.equal(rs[1]?.type === 'fill' && rs[1].fill_qty, TEST_QTY.UNAVAILABLE);
});

test('qty 7777: one partial fill of 1111, rests, and a cancel cancels the other 6666', async () => {
  const { clock, connector } = setup();
  const router = new MiniRouter(connector);
  const o = order('r7777', { qty: TEST_QTY.PARTIAL_THEN_REST });
  router.track(o);
  router.apply((await connector.submit(o)).report);
  clock.advance(86_400_000);
  await router.poll();
  const rs = await reportsOf(connector, o.order_id);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'partial_fill'],
  );
  const partial = rs[1];
  assert.ok(partial?.type === 'partial_fill');
  assert.equal(partial.fill_qty, PARTIAL_THEN_REST_FILL_QTY);
  assert.equal(partial.executed_at, '2026-11-22T10:00:01.000Z');
  assert.equal(router.orders.get(o.order_id)?.status, 'partially_filled');

  const cancel = await connector.cancel(o.order_id, cancelRequest(o.order_id));
  assert.equal(cancel.status, 'cancelled');
  assert.ok(cancel.status === 'cancelled');
  assert.equal(cancel.report.cancelled_qty, TEST_QTY.PARTIAL_THEN_REST - PARTIAL_THEN_REST_FILL_QTY);
  assert.equal(cancel.report.cum_qty, PARTIAL_THEN_REST_FILL_QTY);
  assert.equal(cancel.report.seq, 3);
  router.apply(cancel.report);
  await router.poll(); // the same report again from the log: a duplicate, dropped
  const final = router.orders.get(o.order_id);
  assert.equal(final?.status, 'cancelled');
  assert.equal(final?.filled_qty, PARTIAL_THEN_REST_FILL_QTY);
  assert.equal(averageFillPrice(final?.fill_notional_cents ?? 0n, final?.filled_qty ?? 0), partial.fill_price_cents);
  assert.deepEqual(await connector.cancel(o.order_id, cancelRequest(o.order_id)), cancel, 'cancel is idempotent');
});

test('buy limit 1 and sell limit 1e12 rest until cancelled', async () => {
  const { clock, connector } = setup();
  const buy = order('lim1', { limit_price_cents: 1, qty: 5 });
  const sell = order('limmax', { side: 'sell', limit_price_cents: 1_000_000_000_000, qty: 5 });
  // Even on an instrument priced 1 cent, where the market sits at the limit.
  const penny = order('penny', { limit_price_cents: 1, reference_price_cents: 1, qty: 5 });
  for (const o of [buy, sell, penny]) assert.equal((await connector.submit(o)).status, 'accepted');
  clock.advance(7 * 86_400_000);
  assert.deepEqual(
    (await allReports(connector)).map((r) => r.type),
    ['accepted', 'accepted', 'accepted'],
  );
  for (const o of [buy, sell, penny]) {
    const c = await connector.cancel(o.order_id, cancelRequest(o.order_id));
    assert.ok(c.status === 'cancelled');
    assert.equal(c.report.cancelled_qty, 5);
    assert.equal(c.report.cum_qty, 0);
    assert.equal(c.report.occurred_at, '2026-11-29T10:00:00.000Z');
  }
});

test('market orders fill 1 s after acceptance within +-1% of the reference, on every sandbox instrument', async () => {
  const { clock, connector } = setup();
  let n = 0;
  for (const inst of SANDBOX_INSTRUMENTS.filter((i) => (i.status ?? 'active') === 'active')) {
    for (let k = 0; k < 20; k++) {
      const o = order(`mkt-${inst.code}-${k}`, {
        instrument: inst.code,
        reference_price_cents: inst.reference_price_cents,
        side: k % 2 ? 'sell' : 'buy',
        qty: 1 + k * 37,
      });
      const accepted = await connector.submit(o);
      assert.equal(accepted.status, 'accepted');
      clock.advance(FIRST_FILL_DELAY_MS);
      const rs = await reportsOf(connector, o.order_id);
      assert.deepEqual(
        rs.map((r) => r.type),
        ['accepted', 'fill'],
        inst.code,
      );
      const fill = rs[1];
      assert.ok(fill?.type === 'fill');
      assert.ok(withinBand(fill.fill_price_cents, inst.reference_price_cents), `${inst.code} ${fill.fill_price_cents}`);
      assert.equal(Date.parse(fill.executed_at) - Date.parse(accepted.report.occurred_at), FIRST_FILL_DELAY_MS);
      assert.match(fill.exchange_ref, new RegExp(`^${inst.code.split('.')[1]}-20261122-\\d{6}$`));
      clock.advance(12_345);
      n++;
    }
  }
  assert.ok(n > 500);
  const prices = new Set((await allReports(connector)).flatMap((r) => (r.type === 'fill' ? [r.fill_price_cents] : [])));
  assert.ok(prices.size > n / 2, 'prices move');
});

test('the simulated price stays in the +-1% band and sweeps most of it every period', () => {
  for (const inst of SANDBOX_INSTRUMENTS) {
    const ref = inst.reference_price_cents;
    let min = Infinity;
    let max = -Infinity;
    for (let t = T0; t < T0 + PRICE_PERIOD_MS; t += 1000) {
      const p = simulatedPriceCents(inst.code, ref, t);
      assert.ok(withinBand(p, ref), `${inst.code} at ${t}: ${p}`);
      assert.equal(p, simulatedPriceCents(inst.code, ref, t + 999), 'constant within a tick');
      min = Math.min(min, p);
      max = Math.max(max, p);
    }
    // The wave alone reaches +-0.8%; the noise can only add.
    assert.ok(min <= ref - Math.floor((ref * 60) / 10_000), `${inst.code} min ${min}`);
    assert.ok(max >= ref + Math.floor((ref * 60) / 10_000), `${inst.code} max ${max}`);
  }
  assert.deepEqual(priceBand(1_550_000), { lo: 1_534_500, hi: 1_565_500 });
  assert.deepEqual(priceBand(1), { lo: 1, hi: 1 });
  assert.equal(simulatedPriceCents('X.BRVM', 1, T0), 1);
});

test("fills and simulated prices stay inside each instrument's band and on its tick grid", async () => {
  const { clock, connector } = setup();
  let fills = 0;
  for (const row of SANDBOX_INSTRUMENTS.filter((i) => (i.status ?? 'active') === 'active')) {
    const made = instrumentFromImport(row, undefined, T0);
    assert.ok('row' in made, row.code);
    const rules = { tick_size_cents: made.row.tick_size_cents, price_limits: priceLimits(made.row) };
    for (let t = T0; t < T0 + PRICE_PERIOD_MS; t += 7_000) {
      const p = simulatedPriceCents(row.code, row.reference_price_cents, t, rules);
      assert.equal(p % rules.tick_size_cents, 0, `${row.code} ${p} off the grid`);
      if (rules.price_limits !== null)
        assert.ok(p >= rules.price_limits.low_cents && p <= rules.price_limits.high_cents, `${row.code} ${p}`);
    }
    for (let k = 0; k < 5; k++) {
      const o = order(`grid-${row.code}-${k}`, {
        instrument: row.code,
        reference_price_cents: row.reference_price_cents,
        qty: 1 + k,
        ...rules,
      });
      await connector.submit(o);
      clock.advance(FIRST_FILL_DELAY_MS + 3_001);
      const fill = (await reportsOf(connector, o.order_id)).find((r) => r.type === 'fill');
      assert.ok(fill?.type === 'fill', row.code);
      assert.equal(fill.fill_price_cents % rules.tick_size_cents, 0, `${row.code} fill ${fill.fill_price_cents}`);
      if (rules.price_limits !== null)
        assert.ok(fill.fill_price_cents <= rules.price_limits.high_cents && fill.fill_price_cents >= rules.price_limits.low_cents);
      fills++;
    }
  }
  assert.ok(fills > 400);
});

test("a band narrower than the market's swing: no market fill ever goes past it", async () => {
  // +-0.5 % around 10,000 XOF on a 5 XOF tick: the synthetic market (+-1 %) would leave it.
  const ref = 1_000_000;
  const rules = {
    tick_size_cents: 500,
    price_limits: priceLimits({ reference_price_cents: ref, tick_size_cents: 500, price_band_bps: 50 }),
  };
  assert.deepEqual(rules.price_limits, { low_cents: 995_000, high_cents: 1_005_000 });
  assert.deepEqual(priceRange(ref, rules), { lo: 995_000, hi: 1_005_000 });
  const { clock, connector } = setup();
  const prices = new Set<number>();
  for (let k = 0; k < 120; k++) {
    const o = order(`narrow-${k}`, { reference_price_cents: ref, side: k % 2 ? 'sell' : 'buy', qty: 7, ...rules });
    await connector.submit(o);
    clock.advance(FIRST_FILL_DELAY_MS + 4_999);
    const fill = (await reportsOf(connector, o.order_id)).find((r) => r.type === 'fill');
    assert.ok(fill?.type === 'fill');
    assert.ok(fill.fill_price_cents >= 995_000 && fill.fill_price_cents <= 1_005_000, String(fill.fill_price_cents));
    assert.equal(fill.fill_price_cents % 500, 0);
    prices.add(fill.fill_price_cents);
  }
  assert.ok(prices.has(1_005_000), 'the market presses against the upper limit and stops there');
  assert.ok(prices.has(995_000), 'and against the lower one');
  // No multiple of the tick within +-1 %: the one price is the grid's nearest to the reference.
  assert.deepEqual(priceRange(1_850, { tick_size_cents: 1_000, price_limits: null }), { lo: 2_000, hi: 2_000 });
  assert.deepEqual(priceRange(1_850, { tick_size_cents: 1_000, price_limits: { low_cents: 1_000, high_cents: 1_000 } }), {
    lo: 1_000,
    hi: 1_000,
  });
});

test(`large orders (qty >= ${LARGE_ORDER_QTY}) fill in 3 to 5 executions over 2 to 10 s, summing exactly to qty`, async () => {
  const { clock, connector } = setup();
  const router = new MiniRouter(connector);
  const counts = new Set<number>();
  for (const [k, qty] of [999, 1000, 1001, 4321, 99_999, 1_000_000_000].entries()) {
    for (let j = 0; j < 12; j++) {
      const o = order(`large-${k}-${j}`, { qty, side: j % 2 ? 'sell' : 'buy' });
      router.track(o);
      const res = await connector.submit(o);
      router.apply(res.report);
      clock.advance(60_000);
      await router.poll();
      const fills = (await reportsOf(connector, o.order_id)).filter((r) => r.type === 'partial_fill' || r.type === 'fill');
      const state = router.orders.get(o.order_id);
      assert.equal(state?.status, 'filled');
      assert.equal(state.filled_qty, qty);
      assert.equal(
        fills.reduce((s, f) => s + f.fill_qty, 0),
        qty,
      );
      if (qty < LARGE_ORDER_QTY) {
        assert.equal(fills.length, 1);
        continue;
      }
      counts.add(fills.length);
      assert.ok(fills.length >= 3 && fills.length <= 5, `${fills.length} fills`);
      assert.deepEqual(
        fills.map((f) => f.type),
        [...Array(fills.length - 1).fill('partial_fill'), 'fill'],
      );
      const start = Date.parse(res.report.occurred_at);
      const times = fills.map((f) => Date.parse(f.executed_at) - start);
      assert.equal(times[0], FIRST_FILL_DELAY_MS);
      for (let i = 1; i < times.length; i++) {
        const gap = (times[i] as number) - (times[i - 1] as number);
        assert.ok(gap >= 1000 && gap <= 2000, `gap ${gap}`);
      }
      const last = times.at(-1) as number;
      assert.ok(last >= 2000 && last <= 10_000, `spread ${last}`);
      // The quantity-weighted mean, computed here independently, rounded half up.
      const notional = fills.reduce((s, f) => s + BigInt(f.fill_qty) * BigInt(f.fill_price_cents), 0n);
      assert.equal(state.fill_notional_cents, notional);
      const q = BigInt(qty);
      const expected = Number(notional / q) + (2n * (notional % q) >= q ? 1 : 0);
      assert.equal(averageFillPrice(state.fill_notional_cents, state.filled_qty), expected);
      for (const f of fills) assert.ok(withinBand(f.fill_price_cents, KOLA));
    }
  }
  assert.deepEqual([...counts].sort(), [3, 4, 5], 'every count occurs');
});

/** The first tick at or after `from` where the market crosses `limit`. */

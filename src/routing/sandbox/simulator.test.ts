import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../lib/clock.js';
import { deterministicId, type OrderId } from '../../lib/ids.js';
import { SANDBOX_INSTRUMENTS } from '../../partners/sandbox-seed.js';
import { instrumentFromImport } from '../../partners/instrument.service.js';
import { priceLimits } from '../../orders/core/price-rules.js';
import { averageFillPrice, applyFill, initialFillState, type FillState } from '../../orders/core/fills.js';
import { assertTransition } from '../../orders/core/state-machine.js';
import { ConnectorUnavailableError, classifyReport, isFinalReport, type ExecutionReport, type OrderForPartner } from '../connector.js';
import { FIRST_FILL_DELAY_MS, LARGE_ORDER_QTY, PRICE_PERIOD_MS, priceBand, priceRange, simulatedPriceCents } from './market.js';
import { SandboxConnector } from './sandbox-connector.js';
import { SgiSimulator } from './simulator.js';
import { EXCHANGE_REJECT_DELAY_MS, PARTIAL_THEN_REST_FILL_QTY, SANDBOX_TEST_VALUES, TEST_QTY, UNAVAILABLE_ATTEMPTS } from './test-values.js';

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const id = (label: string): OrderId => deterministicId('order', T0, label);
const KOLA = 1_550_000; // KOLA.BRVM reference, cents

function order(label: string, fields: Partial<OrderForPartner> = {}): OrderForPartner {
  return {
    order_id: id(label),
    instrument: 'KOLA.BRVM',
    instrument_status: 'active',
    side: 'buy',
    qty: 10,
    limit_price_cents: null,
    reference_price_cents: KOLA,
    time_in_force: 'gtc',
    expire_date: null,
    ...fields,
  };
}

/** The client's first cancel request of an order. */
const cancelRequest = (orderId: OrderId) => ({ request_id: `${orderId}.1`, reason: 'requested' as const });

function setup(start: number = T0) {
  const clock = new ManualClock(start);
  const connector = new SandboxConnector({ name: 'sgi_sandbox', clock });
  return { clock, connector };
}

async function allReports(connector: SandboxConnector): Promise<ExecutionReport[]> {
  return [...(await connector.reports(null, { limit: 1_000_000 })).reports];
}

async function reportsOf(connector: SandboxConnector, orderId: OrderId): Promise<ExecutionReport[]> {
  return (await allReports(connector)).filter((r) => r.order_id === orderId);
}

const withinBand = (price: number, ref: number) => Math.abs(price - ref) * 100 <= ref;

/**
 * A minimal router over the pure core: applies a connector's reports exactly once and in order
 * (classifyReport), through the state machine and applyFill, as the real router is meant to.
 */
class MiniRouter {
  readonly orders = new Map<string, FillState & { lastSeq: number; failure: string | null }>();
  position: string | null = null;
  constructor(readonly connector: SandboxConnector) {}
  track(o: OrderForPartner): void {
    this.orders.set(o.order_id, { ...initialFillState(o.qty), lastSeq: 0, failure: null });
  }
  apply(r: ExecutionReport): void {
    const o = this.orders.get(r.order_id);
    assert.ok(o, `report for an unknown order ${r.order_id}`);
    const c = classifyReport(o.lastSeq, r);
    if (c === 'duplicate') return;
    assert.equal(c, 'next', `gap before ${r.report_id}`);
    let next: FillState = o;
    switch (r.type) {
      case 'accepted':
        assertTransition(o.status, 'routed');
        next = { ...o, status: 'routed' };
        break;
      case 'partial_fill':
      case 'fill':
        next = applyFill(o, r);
        assert.equal(next.filled_qty, r.cum_qty);
        assert.equal(next.qty - next.filled_qty, r.leaves_qty);
        assert.equal(next.status, r.type === 'fill' ? 'filled' : 'partially_filled');
        break;
      case 'rejected':
        assertTransition(o.status, 'failed');
        next = { ...o, status: 'failed' };
        break;
      case 'cancelled':
        assertTransition(o.status, 'cancelled');
        assert.equal(r.cum_qty, o.filled_qty);
        assert.equal(r.cancelled_qty, o.qty - o.filled_qty);
        next = { ...o, status: 'cancelled' };
        break;
    }
    this.orders.set(r.order_id, { ...o, ...next, lastSeq: r.seq, failure: r.type === 'rejected' ? r.reason : o.failure });
  }
  async poll(limit = 7): Promise<void> {
    for (;;) {
      const batch = await this.connector.reports(this.position, { limit });
      for (const r of batch.reports) this.apply(r);
      this.position = batch.position;
      if (batch.reports.length < limit) return;
    }
  }
}

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
  const b = order('trans', { instrument: 'TRANS.BRVM', instrument_status: 'suspended', reference_price_cents: trans?.reference_price_cents ?? 0, qty: 50 });
  const c = order('trans13', { instrument: 'SOLAR.GSE', instrument_status: 'suspended', reference_price_cents: 61_000, qty: TEST_QTY.SGI_REJECTED });
  for (const o of [a, b, c]) assert.equal((await connector.submit(o)).status, 'accepted');
  clock.advance(EXCHANGE_REJECT_DELAY_MS - 1);
  for (const o of [a, b, c]) assert.deepEqual((await reportsOf(connector, o.order_id)).map((r) => r.type), ['accepted']);
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
    await assert.rejects(connector.submit(o), (err: unknown) => err instanceof ConnectorUnavailableError && err.code === 'connector_unavailable' && err.connector === 'sgi_sandbox');
    assert.deepEqual(await allReports(connector), [], 'nothing happened at the partner');
    assert.deepEqual(await connector.cancel(o.order_id, cancelRequest(o.order_id)), { status: 'refused', reason: 'unknown_order' });
    clock.advance(30_000);
  }
  const res = await connector.submit(o);
  assert.equal(res.status, 'accepted');
  assert.deepEqual(await connector.submit(o), res, 'later submits are idempotent');
  clock.advance(FIRST_FILL_DELAY_MS);
  const rs = await reportsOf(connector, o.order_id);
  assert.deepEqual(rs.map((r) => r.type), ['accepted', 'fill']);
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
  assert.deepEqual(rs.map((r) => r.type), ['accepted', 'partial_fill']);
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
  assert.deepEqual((await allReports(connector)).map((r) => r.type), ['accepted', 'accepted', 'accepted']);
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
      const o = order(`mkt-${inst.code}-${k}`, { instrument: inst.code, reference_price_cents: inst.reference_price_cents, side: k % 2 ? 'sell' : 'buy', qty: 1 + k * 37 });
      const accepted = await connector.submit(o);
      assert.equal(accepted.status, 'accepted');
      clock.advance(FIRST_FILL_DELAY_MS);
      const rs = await reportsOf(connector, o.order_id);
      assert.deepEqual(rs.map((r) => r.type), ['accepted', 'fill'], inst.code);
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

test('fills and simulated prices stay inside each instrument\'s band and on its tick grid', async () => {
  const { clock, connector } = setup();
  let fills = 0;
  for (const row of SANDBOX_INSTRUMENTS.filter((i) => (i.status ?? 'active') === 'active')) {
    const made = instrumentFromImport(row, undefined, T0);
    assert.ok('row' in made, row.code);
    const rules = { tick_size_cents: made.row.tick_size_cents, price_limits: priceLimits(made.row) };
    for (let t = T0; t < T0 + PRICE_PERIOD_MS; t += 7_000) {
      const p = simulatedPriceCents(row.code, row.reference_price_cents, t, rules);
      assert.equal(p % rules.tick_size_cents, 0, `${row.code} ${p} off the grid`);
      if (rules.price_limits !== null) assert.ok(p >= rules.price_limits.low_cents && p <= rules.price_limits.high_cents, `${row.code} ${p}`);
    }
    for (let k = 0; k < 5; k++) {
      const o = order(`grid-${row.code}-${k}`, { instrument: row.code, reference_price_cents: row.reference_price_cents, qty: 1 + k, ...rules });
      await connector.submit(o);
      clock.advance(FIRST_FILL_DELAY_MS + 3_001);
      const fill = (await reportsOf(connector, o.order_id)).find((r) => r.type === 'fill');
      assert.ok(fill?.type === 'fill', row.code);
      assert.equal(fill.fill_price_cents % rules.tick_size_cents, 0, `${row.code} fill ${fill.fill_price_cents}`);
      if (rules.price_limits !== null) assert.ok(fill.fill_price_cents <= rules.price_limits.high_cents && fill.fill_price_cents >= rules.price_limits.low_cents);
      fills++;
    }
  }
  assert.ok(fills > 400);
});

test('a band narrower than the market\'s swing: no market fill ever goes past it', async () => {
  // +-0.5 % around 10,000 XOF on a 5 XOF tick: the synthetic market (+-1 %) would leave it.
  const ref = 1_000_000;
  const rules = { tick_size_cents: 500, price_limits: priceLimits({ reference_price_cents: ref, tick_size_cents: 500, price_band_bps: 50 }) };
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
  assert.deepEqual(priceRange(1_850, { tick_size_cents: 1_000, price_limits: { low_cents: 1_000, high_cents: 1_000 } }), { lo: 1_000, hi: 1_000 });
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
      assert.equal(fills.reduce((s, f) => s + f.fill_qty, 0), qty);
      if (qty < LARGE_ORDER_QTY) {
        assert.equal(fills.length, 1);
        continue;
      }
      counts.add(fills.length);
      assert.ok(fills.length >= 3 && fills.length <= 5, `${fills.length} fills`);
      assert.deepEqual(fills.map((f) => f.type), [...Array(fills.length - 1).fill('partial_fill'), 'fill']);
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
function firstCrossing(instrument: string, ref: number, side: 'buy' | 'sell', limit: number, from: number): number {
  for (let t = from; t < from + 10 * PRICE_PERIOD_MS; t += 1000) {
    const p = simulatedPriceCents(instrument, ref, t);
    if (side === 'buy' ? p <= limit : p >= limit) return t;
  }
  throw new Error('no crossing');
}

for (const side of ['buy', 'sell'] as const) {
  test(`a limit ${side} away from the market rests, then fills when the price crosses it`, async () => {
    const limit = side === 'buy' ? KOLA - Math.floor(KOLA / 200) : KOLA + Math.floor(KOLA / 200); // 0.5% away
    // Start at a moment where the market is on the wrong side of the limit.
    let start = T0;
    while (side === 'buy' ? simulatedPriceCents('KOLA.BRVM', KOLA, start + 1000) <= limit : simulatedPriceCents('KOLA.BRVM', KOLA, start + 1000) >= limit) {
      start += 1000;
    }
    const { clock, connector } = setup(start);
    const o = order(`limit-${side}`, { side, limit_price_cents: limit, qty: 40 });
    await connector.submit(o);
    const crossing = firstCrossing('KOLA.BRVM', KOLA, side, limit, start + FIRST_FILL_DELAY_MS);
    assert.ok(crossing - start > 10_000, 'rests a while first');
    assert.ok(crossing - start <= PRICE_PERIOD_MS + 1000, 'fills within one period at 0.5% away');
    // Move the clock in uneven steps: the outcome must not depend on when the partner is asked.
    while (clock.now().getTime() + 7_777 < crossing) {
      clock.advance(7_777);
      assert.deepEqual((await reportsOf(connector, o.order_id)).map((r) => r.type), ['accepted']);
    }
    clock.set(crossing - 1);
    assert.equal((await reportsOf(connector, o.order_id)).length, 1);
    clock.set(crossing);
    const rs = await reportsOf(connector, o.order_id);
    assert.deepEqual(rs.map((r) => r.type), ['accepted', 'fill']);
    const fill = rs[1];
    assert.ok(fill?.type === 'fill');
    assert.equal(Date.parse(fill.executed_at), crossing);
    assert.ok(side === 'buy' ? fill.fill_price_cents <= limit : fill.fill_price_cents >= limit, `${fill.fill_price_cents} vs ${limit}`);
    assert.ok(withinBand(fill.fill_price_cents, KOLA));
  });
}

test('a limit beyond the band rests forever; a marketable limit fills at once, never beyond the limit', async () => {
  const { clock, connector } = setup();
  const { lo, hi } = priceBand(KOLA);
  const far = order('far', { limit_price_cents: lo - 1, qty: 3 });
  const marketable = order('marketable', { limit_price_cents: hi, qty: 3000 });
  const tight = order('tight-sell', { side: 'sell', limit_price_cents: lo, qty: 3 });
  for (const o of [far, marketable, tight]) await connector.submit(o);
  clock.advance(12_000);
  const rs = await allReports(connector);
  assert.equal(rs.filter((r) => r.order_id === far.order_id).length, 1);
  const fills = rs.filter((r) => r.order_id === marketable.order_id && (r.type === 'fill' || r.type === 'partial_fill'));
  assert.equal(fills.reduce((s, r) => s + (r.type === 'fill' || r.type === 'partial_fill' ? r.fill_qty : 0), 0), 3000);
  for (const f of fills) assert.ok(f.type !== 'accepted' && 'fill_price_cents' in f && f.fill_price_cents <= hi);
  assert.deepEqual(rs.filter((r) => r.order_id === tight.order_id).map((r) => r.type), ['accepted', 'fill']);
  clock.advance(30 * 86_400_000);
  assert.equal((await reportsOf(connector, far.order_id)).length, 1, 'a month later, still resting');
});

test('cancel: filled orders refuse, unknown orders are unknown, resting orders cancel at once', async () => {
  const { clock, connector } = setup();
  const filled = order('to-fill', { qty: 2 });
  const resting = order('to-cancel', { limit_price_cents: 100, qty: 9 });
  await connector.submit(filled);
  await connector.submit(resting);
  clock.advance(FIRST_FILL_DELAY_MS);
  // The fill due at this instant happens before the cancel.
  assert.deepEqual(await connector.cancel(filled.order_id, cancelRequest(filled.order_id)), { status: 'refused', reason: 'already_filled' });
  assert.deepEqual(await connector.cancel(id('never-sent'), cancelRequest(id('never-sent'))), { status: 'refused', reason: 'unknown_order' });
  const c = await connector.cancel(resting.order_id, cancelRequest(resting.order_id));
  assert.ok(c.status === 'cancelled');
  assert.deepEqual(c.report, {
    report_id: `sgi_sandbox:${resting.order_id}:2`,
    order_id: resting.order_id,
    seq: 2,
    type: 'cancelled',
    occurred_at: '2026-11-22T10:00:01.000Z',
    cancelled_qty: 9,
    cum_qty: 0,
    reason: 'requested',
    request_id: `${resting.order_id}.1`,
  });
  // A large order cancelled between its partial fills: the rest never executes.
  const large = order('cancel-mid', { qty: 5000 });
  await connector.submit(large);
  clock.advance(FIRST_FILL_DELAY_MS);
  const mid = await connector.cancel(large.order_id, cancelRequest(large.order_id));
  assert.ok(mid.status === 'cancelled');
  assert.ok(mid.report.cum_qty > 0 && mid.report.cum_qty < 5000);
  assert.equal(mid.report.cum_qty + mid.report.cancelled_qty, 5000);
  clock.advance(60_000);
  const rs = await reportsOf(connector, large.order_id);
  assert.deepEqual(rs.map((r) => r.type), ['accepted', 'partial_fill', 'cancelled']);
});

test('report positions: paging, at-least-once re-reads, unknown positions read from the start', async () => {
  const { clock, connector } = setup();
  assert.deepEqual(await connector.reports(null), { reports: [], position: null });
  for (let k = 0; k < 4; k++) await connector.submit(order(`page-${k}`, { qty: 2000 }));
  clock.advance(20_000);
  const all = await allReports(connector);
  assert.ok(all.length >= 16);
  const pages: ExecutionReport[] = [];
  let pos: string | null = null;
  const positions: (string | null)[] = [];
  for (;;) {
    const b = await connector.reports(pos, { limit: 5 });
    pages.push(...b.reports);
    if (b.reports.length === 0) {
      assert.equal(b.position, pos, 'nothing new: the same position');
      break;
    }
    positions.push(pos);
    pos = b.position;
  }
  assert.deepEqual(pages, all);
  // Re-reading from an older position gives the same reports again (at-least-once).
  const again = await connector.reports(positions[1] ?? null, { limit: 5 });
  assert.deepEqual(again.reports, all.slice(5, 10));
  // A position of another log (another epoch), or garbage, reads as the beginning.
  for (const p of ['zzz:3', 'garbage', `${(pos ?? '').split(':')[0]}:999999`]) {
    assert.deepEqual((await connector.reports(p, { limit: 3 })).reports, all.slice(0, 3), p);
  }
  await assert.rejects(connector.reports(null, { limit: 0 }), RangeError);
  // The log is in time order and report ids are unique.
  const times = all.map((r) => Date.parse(r.occurred_at));
  assert.deepEqual([...times].sort((a, b) => a - b), times);
  assert.equal(new Set(all.map((r) => r.report_id)).size, all.length);
});

test('exchange references: per exchange and UTC day, six digits', async () => {
  const { clock, connector } = setup(Date.parse('2026-11-22T23:59:58.000Z'));
  await connector.submit(order('ex1'));
  await connector.submit(order('ex2', { instrument: 'GOLDF.GSE', reference_price_cents: 260_000 }));
  clock.advance(1000);
  await connector.submit(order('ex3'));
  clock.advance(1000);
  await connector.submit(order('ex4'));
  clock.advance(1000);
  const refs = (await allReports(connector)).flatMap((r) => (r.type === 'fill' ? [r.exchange_ref] : []));
  assert.deepEqual(refs, ['BRVM-20261122-000001', 'GSE-20261122-000001', 'BRVM-20261123-000001', 'BRVM-20261123-000002']);
});

test('malformed orders are a programming error, not a rejection', async () => {
  const { connector } = setup();
  for (const bad of [{ qty: 0 }, { qty: 1.5 }, { instrument: 'kola.brvm' }, { limit_price_cents: 0 }, { reference_price_cents: 0 }, { side: 'hold' as 'buy' }]) {
    await assert.rejects(connector.submit(order('bad', bad)), TypeError, JSON.stringify(bad));
  }
});

/** A fixed workload of every kind of order, with cancels and polls at given times. */
async function workload(connector: SandboxConnector, clock: ManualClock, pollEveryMs: number | null): Promise<ExecutionReport[]> {
  const script: [number, (() => Promise<unknown>)][] = [];
  const qtys = [1, 13, 402, 451, 503, 7777, 1000, 2500, 64, 999, 12_345, 7777, 3];
  qtys.forEach((qty, k) => {
    const o = order(`det-${k}`, { qty, side: k % 3 ? 'buy' : 'sell', limit_price_cents: k % 4 === 0 ? KOLA + (k % 8 === 0 ? 5000 : -5000) : null });
    // Three hand-overs of each order: the 503 one needs them; for the others they are no-ops.
    for (const retry of [0, 10_000, 40_000]) script.push([k * 900 + retry, () => connector.submit(o).catch((e: unknown) => e)]);
    if (k % 5 === 2) script.push([k * 900 + 2_500, () => connector.cancel(o.order_id, cancelRequest(o.order_id))]);
  });
  script.push([300_000, () => connector.cancel(id('det-5'), cancelRequest(id('det-5')))]);
  script.sort((x, y) => x[0] - y[0]);
  const end = T0 + PRICE_PERIOD_MS * 2;
  const start = clock.now().getTime();
  for (const [at, step] of script) {
    if (pollEveryMs !== null) {
      while (clock.now().getTime() + pollEveryMs < start + at) {
        clock.advance(pollEveryMs);
        await connector.reports(null);
      }
    }
    clock.set(start + at);
    await step();
  }
  clock.set(end);
  return allReports(connector);
}

test('determinism: the same calls at the same times give identical reports, however often the log is read', async () => {
  const a = setup();
  const b = setup();
  const c = setup();
  const ra = await workload(a.connector, a.clock, null);
  const rb = await workload(b.connector, b.clock, null);
  const rc = await workload(c.connector, c.clock, 333);
  assert.ok(ra.length > 30);
  assert.deepEqual(rb, ra);
  assert.deepEqual(rc, ra, 'polling frequency does not change the log');
  // And the log obeys the connector contract, as checked by a router over the pure core.
  const router = new MiniRouter(a.connector);
  for (const r of ra) if (!router.orders.has(r.order_id)) router.orders.set(r.order_id, { ...initialFillState(qtyOf(r, ra)), lastSeq: 0, failure: null });
  await router.poll(4);
  for (const [orderId, s] of router.orders) {
    const rs = ra.filter((r) => r.order_id === orderId);
    assert.ok(rs[0]?.type === 'accepted' || rs[0]?.type === 'rejected');
    assert.ok(rs.slice(0, -1).every((r) => !isFinalReport(r)), 'nothing after a final report');
    assert.equal(s.lastSeq, rs.length);
  }
});

/** The order quantity, recovered from its reports (the mini router needs it). */
function qtyOf(r: ExecutionReport, all: ExecutionReport[]): number {
  for (const x of all) {
    if (x.order_id !== r.order_id) continue;
    if (x.type === 'fill' || x.type === 'partial_fill') return x.cum_qty + x.leaves_qty;
    if (x.type === 'cancelled') return x.cum_qty + x.cancelled_qty;
    if (x.type === 'replaced') return x.qty;
  }
  return 1_000_000_000;
}

test('the simulator itself is driven by explicit times, and time never runs backwards', () => {
  const sim = new SgiSimulator({ name: 'sim', epoch: 'e1' });
  const o = order('explicit');
  sim.submit(o, T0);
  assert.equal(sim.advance(T0 - 60_000), T0, 'an earlier time is read as now');
  assert.equal(sim.reports(null, T0 + 999).reports.length, 1);
  const b = sim.reports(null, T0 + 1000);
  assert.equal(b.reports.length, 2);
  assert.equal(b.position, 'e1:2');
  assert.throws(() => new SgiSimulator({ name: 'bad name' }), TypeError);
});

test('SANDBOX_TEST_VALUES documents every trigger with the constants the simulator uses', () => {
  const byValue = new Map(SANDBOX_TEST_VALUES.map((v) => [`${v.trigger}=${v.value}`, v]));
  for (const q of Object.values(TEST_QTY)) assert.ok(byValue.has(`qty=${q}`), `qty ${q}`);
  const suspended = SANDBOX_INSTRUMENTS.filter((i) => i.status === 'suspended').map((i) => i.code);
  assert.deepEqual(byValue.get('instrument_status=suspended')?.description.match(/[A-Z0-9]+\.(BRVM|BVMAC|GSE)/g), suspended, 'the seed catalogue');
  assert.ok(byValue.has('limit_price_cents=1 (buy)'));
  assert.ok(byValue.has('limit_price_cents=1000000000000 (sell)'));
  assert.equal(new Set(Object.values(TEST_QTY)).size, Object.values(TEST_QTY).length);
  for (const q of Object.values(TEST_QTY) as number[]) assert.notEqual(q, LARGE_ORDER_QTY);
  for (const v of SANDBOX_TEST_VALUES) for (const k of ['trigger', 'value', 'outcome', 'reports', 'description'] as const) assert.ok(v[k].length > 0);
  assert.ok(Object.isFrozen(SANDBOX_TEST_VALUES));
});

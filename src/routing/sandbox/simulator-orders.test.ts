import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ManualClock } from '../../lib/clock.js';
import { SANDBOX_INSTRUMENTS } from '../../partners/sandbox-seed.js';
import { initialFillState } from '../../orders/core/fills.js';
import { isFinalReport, type ExecutionReport } from '../connector.js';
import { FIRST_FILL_DELAY_MS, LARGE_ORDER_QTY, PRICE_PERIOD_MS, priceBand, simulatedPriceCents } from './market.js';
import type { SandboxConnector } from './sandbox-connector.js';
import { SgiSimulator } from './simulator.js';
import { SANDBOX_TEST_VALUES, TEST_QTY } from './test-values.js';
import { T0, id, KOLA, order, cancelRequest, setup, allReports, reportsOf, withinBand, MiniRouter } from './simulator.test-support.js';

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
    while (
      side === 'buy'
        ? simulatedPriceCents('KOLA.BRVM', KOLA, start + 1000) <= limit
        : simulatedPriceCents('KOLA.BRVM', KOLA, start + 1000) >= limit
    ) {
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
      assert.deepEqual(
        (await reportsOf(connector, o.order_id)).map((r) => r.type),
        ['accepted'],
      );
    }
    clock.set(crossing - 1);
    assert.equal((await reportsOf(connector, o.order_id)).length, 1);
    clock.set(crossing);
    const rs = await reportsOf(connector, o.order_id);
    assert.deepEqual(
      rs.map((r) => r.type),
      ['accepted', 'fill'],
    );
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
  assert.equal(
    fills.reduce((s, r) => s + (r.type === 'fill' || r.type === 'partial_fill' ? r.fill_qty : 0), 0),
    3000,
  );
  for (const f of fills) assert.ok(f.type !== 'accepted' && 'fill_price_cents' in f && f.fill_price_cents <= hi);
  assert.deepEqual(
    rs.filter((r) => r.order_id === tight.order_id).map((r) => r.type),
    ['accepted', 'fill'],
  );
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
  assert.deepEqual(await connector.cancel(filled.order_id, cancelRequest(filled.order_id)), {
    status: 'refused',
    reason: 'already_filled',
  });
  assert.deepEqual(await connector.cancel(id('never-sent'), cancelRequest(id('never-sent'))), {
    status: 'refused',
    reason: 'unknown_order',
  });
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
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'partial_fill', 'cancelled'],
  );
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
  assert.deepEqual(
    [...times].sort((a, b) => a - b),
    times,
  );
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
  for (const bad of [
    { qty: 0 },
    { qty: 1.5 },
    { instrument: 'kola.brvm' },
    { limit_price_cents: 0 },
    { reference_price_cents: 0 },
    { side: 'hold' as 'buy' },
  ]) {
    await assert.rejects(connector.submit(order('bad', bad)), TypeError, JSON.stringify(bad));
  }
});

/** A fixed workload of every kind of order, with cancels and polls at given times. */
async function workload(connector: SandboxConnector, clock: ManualClock, pollEveryMs: number | null): Promise<ExecutionReport[]> {
  const script: [number, () => Promise<unknown>][] = [];
  const qtys = [1, 13, 402, 451, 503, 7777, 1000, 2500, 64, 999, 12_345, 7777, 3];
  qtys.forEach((qty, k) => {
    const o = order(`det-${k}`, {
      qty,
      side: k % 3 ? 'buy' : 'sell',
      limit_price_cents: k % 4 === 0 ? KOLA + (k % 8 === 0 ? 5000 : -5000) : null,
    });
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
  for (const r of ra)
    if (!router.orders.has(r.order_id)) router.orders.set(r.order_id, { ...initialFillState(qtyOf(r, ra)), lastSeq: 0, failure: null });
  await router.poll(4);
  for (const [orderId, s] of router.orders) {
    const rs = ra.filter((r) => r.order_id === orderId);
    assert.ok(rs[0]?.type === 'accepted' || rs[0]?.type === 'rejected');
    assert.ok(
      rs.slice(0, -1).every((r) => !isFinalReport(r)),
      'nothing after a final report',
    );
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
  assert.deepEqual(
    byValue.get('instrument_status=suspended')?.description.match(/[A-Z0-9]+\.(BRVM|BVMAC|GSE)/g),
    suspended,
    'the seed catalogue',
  );
  assert.ok(byValue.has('limit_price_cents=1 (buy)'));
  assert.ok(byValue.has('limit_price_cents=1000000000000 (sell)'));
  assert.equal(new Set(Object.values(TEST_QTY)).size, Object.values(TEST_QTY).length);
  for (const q of Object.values(TEST_QTY) as number[]) assert.notEqual(q, LARGE_ORDER_QTY);
  for (const v of SANDBOX_TEST_VALUES)
    for (const k of ['trigger', 'value', 'outcome', 'reports', 'description'] as const) assert.ok(v[k].length > 0);
  assert.ok(Object.isFrozen(SANDBOX_TEST_VALUES));
});

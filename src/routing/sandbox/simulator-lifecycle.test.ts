import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../lib/clock.js';
import { deterministicId, type OrderId } from '../../lib/ids.js';
import { isFinalReport, type ExecutionReport, type OrderForPartner } from '../connector.js';
import { FIRST_FILL_DELAY_MS, simulatedPriceCents } from './market.js';
import { SandboxConnector } from './sandbox-connector.js';
import { AMEND_REFUSED_QTY, DEFERRED_ANSWER_MS, PARTIAL_THEN_REST_FILL_QTY, PARTNER_CANCEL_DELAY_MS, TEST_QTY } from './test-values.js';

// Time in force, amends, the partner's own cancels and answers that come later, in the simulator.

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const KOLA = 1_550_000;
const id = (label: string): OrderId => deterministicId('order', T0, label);

function order(label: string, fields: Partial<OrderForPartner> = {}): OrderForPartner {
  return {
    order_id: id(label),
    instrument: 'KOLA.BRVM',
    instrument_status: 'active',
    side: 'buy',
    qty: 10,
    limit_price_cents: null,
    reference_price_cents: KOLA,
    time_in_force: 'day',
    expire_date: null,
    ...fields,
  };
}

function setup() {
  const clock = new ManualClock(T0);
  return { clock, connector: new SandboxConnector({ name: 'sgi_sandbox', clock }) };
}

async function reportsOf(connector: SandboxConnector, orderId: OrderId): Promise<ExecutionReport[]> {
  return (await connector.reports(null, { limit: 100_000 })).reports.filter((r) => r.order_id === orderId);
}

const cancel = (orderId: OrderId, n = 1, reason: 'requested' | 'expired' = 'requested') => ({ request_id: `${orderId}.${n}`, reason });

/** A limit that the simulated price crosses at T0 (a buy at the band's top). */
const MARKETABLE_BUY = Math.floor(KOLA * 1.01);

test('ioc: what executes at once executes, the rest is cancelled unfilled, all at hand-over', async () => {
  const { connector } = setup();
  const small = order('ioc-small', { time_in_force: 'ioc', qty: 10 });
  assert.equal((await connector.submit(small)).status, 'accepted');
  assert.deepEqual(
    (await reportsOf(connector, small.order_id)).map((r) => r.type),
    ['accepted', 'fill'],
    'a small market order fills at once',
  );

  const partial = order('ioc-7777', { time_in_force: 'ioc', qty: TEST_QTY.PARTIAL_THEN_REST });
  await connector.submit(partial);
  const rs = await reportsOf(connector, partial.order_id);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'partial_fill', 'cancelled'],
  );
  const [, fill, rest] = rs;
  assert.ok(fill?.type === 'partial_fill' && rest?.type === 'cancelled');
  assert.equal(fill.fill_qty, PARTIAL_THEN_REST_FILL_QTY);
  assert.equal(fill.executed_at, new Date(T0).toISOString());
  assert.deepEqual(
    [rest.reason, rest.request_id, rest.cum_qty, rest.cancelled_qty],
    ['unfilled', null, PARTIAL_THEN_REST_FILL_QTY, TEST_QTY.PARTIAL_THEN_REST - PARTIAL_THEN_REST_FILL_QTY],
  );

  const resting = order('ioc-resting', { time_in_force: 'ioc', limit_price_cents: 1 });
  await connector.submit(resting);
  const none = await reportsOf(connector, resting.order_id);
  assert.deepEqual(
    none.map((r) => [r.type, r.type === 'cancelled' ? r.cancelled_qty : null]),
    [
      ['accepted', null],
      ['cancelled', 10],
    ],
  );
});

test('fok: the whole quantity at once or nothing', async () => {
  const { clock, connector } = setup();
  const fills = order('fok-fills', { time_in_force: 'fok', qty: 50, limit_price_cents: MARKETABLE_BUY });
  assert.ok(simulatedPriceCents('KOLA.BRVM', KOLA, T0) <= MARKETABLE_BUY);
  await connector.submit(fills);
  const done = await reportsOf(connector, fills.order_id);
  assert.deepEqual(
    done.map((r) => r.type),
    ['accepted', 'fill'],
  );
  assert.ok(done[1]?.type === 'fill' && done[1].fill_price_cents <= MARKETABLE_BUY);

  for (const [label, fields] of [
    ['fok-large', { qty: 3000 }],
    ['fok-7777', { qty: TEST_QTY.PARTIAL_THEN_REST }],
    ['fok-resting', { limit_price_cents: 1 }],
  ] as const) {
    const o = order(label, { time_in_force: 'fok', ...fields });
    await connector.submit(o);
    const rs = await reportsOf(connector, o.order_id);
    assert.deepEqual(
      rs.map((r) => [r.type, r.type === 'cancelled' ? [r.reason, r.cum_qty, r.cancelled_qty] : null]),
      [
        ['accepted', null],
        ['cancelled', ['unfilled', 0, o.qty]],
      ],
      label,
    );
  }
  clock.advance(3_600_000);
  assert.equal((await reportsOf(connector, id('fok-large'))).length, 2, 'nothing after the final report');
});

test('amend: at once, idempotent per request, replanned; refused below the filled quantity, for qty 13, and once the order ended', async () => {
  const { clock, connector } = setup();
  const o = order('amend', { limit_price_cents: 1, qty: 100 });
  await connector.submit(o);
  const first = await connector.amend(o.order_id, { request_id: `${o.order_id}.1`, qty: 200 });
  assert.ok(first.status === 'replaced');
  assert.deepEqual(
    [first.report.type, first.report.seq, first.report.qty, first.report.limit_price_cents, first.report.leaves_qty],
    ['replaced', 2, 200, 1, 200],
  );
  assert.deepEqual(
    await connector.amend(o.order_id, { request_id: `${o.order_id}.1`, qty: 200 }),
    first,
    'a repeated request gets its first answer',
  );
  assert.deepEqual(await connector.amend(o.order_id, { request_id: `${o.order_id}.2`, qty: AMEND_REFUSED_QTY }), {
    status: 'refused',
    reason: 'partner_refused',
  });

  // A marketable limit: the order now executes, as a new one would, 1 s after the amend.
  clock.advance(10_000);
  const marketable = await connector.amend(o.order_id, { request_id: `${o.order_id}.3`, limit_price_cents: MARKETABLE_BUY });
  assert.ok(marketable.status === 'replaced');
  clock.advance(FIRST_FILL_DELAY_MS - 1);
  assert.equal((await reportsOf(connector, o.order_id)).length, 3);
  clock.advance(60_000);
  const rs = await reportsOf(connector, o.order_id);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'replaced', 'replaced', 'fill'],
  );
  assert.ok(rs[3]?.type === 'fill' && rs[3].fill_qty === 200 && rs[3].cum_qty === 200);
  assert.deepEqual(await connector.amend(o.order_id, { request_id: `${o.order_id}.4`, qty: 300 }), {
    status: 'refused',
    reason: 'already_filled',
  });

  const partial = order('amend-partial', { qty: TEST_QTY.PARTIAL_THEN_REST });
  await connector.submit(partial);
  clock.advance(5_000);
  assert.deepEqual(await connector.amend(partial.order_id, { request_id: 'p.1', qty: PARTIAL_THEN_REST_FILL_QTY }), {
    status: 'refused',
    reason: 'below_filled',
  });
  const grown = await connector.amend(partial.order_id, { request_id: 'p.2', qty: 9000 });
  assert.ok(
    grown.status === 'replaced' &&
      grown.report.cum_qty === PARTIAL_THEN_REST_FILL_QTY &&
      grown.report.leaves_qty === 9000 - PARTIAL_THEN_REST_FILL_QTY,
  );
  clock.advance(3_600_000);
  assert.equal((await reportsOf(connector, partial.order_id)).length, 3, 'the 7777 order still rests after its amend');
  assert.deepEqual(await connector.amend(id('unknown'), { request_id: 'u.1', qty: 5 }), { status: 'refused', reason: 'unknown_order' });
});

test("qty 410 and 504: the partner cancels on its own (partner) or reports the exchange's expiry (expired)", async () => {
  const { clock, connector } = setup();
  const byPartner = order('p410', { qty: TEST_QTY.PARTNER_CANCELS });
  const expired = order('p504', { qty: TEST_QTY.EXCHANGE_EXPIRES });
  await connector.submit(byPartner);
  await connector.submit(expired);
  clock.advance(PARTNER_CANCEL_DELAY_MS);
  for (const [o, reason] of [
    [byPartner, 'partner'],
    [expired, 'expired'],
  ] as const) {
    const rs = await reportsOf(connector, o.order_id);
    assert.deepEqual(
      rs.map((r) => r.type),
      ['accepted', 'cancelled'],
    );
    assert.ok(rs[1]?.type === 'cancelled');
    assert.deepEqual([rs[1].reason, rs[1].request_id, rs[1].cancelled_qty], [reason, null, o.qty]);
    // A cancel afterwards answers with that report.
    assert.deepEqual(await connector.cancel(o.order_id, cancel(o.order_id)), { status: 'cancelled', report: rs[1] });
  }
});

test('qty 202: cancels and amends are pending, answered in the log later, unless the order ended first', async () => {
  const { clock, connector } = setup();
  const resting = order('later-rest', { qty: TEST_QTY.ANSWERS_LATER, limit_price_cents: 1 });
  await connector.submit(resting);
  assert.deepEqual(await connector.amend(resting.order_id, { request_id: 'r.1', qty: 300 }), { status: 'pending' });
  assert.deepEqual(
    await connector.amend(resting.order_id, { request_id: 'r.1', qty: 300 }),
    { status: 'pending' },
    'repeated: still pending, taken once',
  );
  clock.advance(DEFERRED_ANSWER_MS);
  const replaced = (await reportsOf(connector, resting.order_id)).at(-1);
  assert.ok(replaced?.type === 'replaced' && replaced.request_id === 'r.1' && replaced.qty === 300);
  assert.deepEqual(await connector.amend(resting.order_id, { request_id: 'r.1', qty: 300 }), { status: 'replaced', report: replaced });
  assert.deepEqual(await connector.amend(resting.order_id, { request_id: 'r.2', qty: AMEND_REFUSED_QTY }), { status: 'pending' });
  clock.advance(DEFERRED_ANSWER_MS);
  const refused = (await reportsOf(connector, resting.order_id)).at(-1);
  assert.deepEqual(refused?.type === 'request_refused' && [refused.request, refused.reason, refused.request_id], [
    'amend',
    'partner_refused',
    'r.2',
  ]);
  assert.deepEqual(await connector.cancel(resting.order_id, cancel(resting.order_id, 3)), { status: 'pending' });
  clock.advance(DEFERRED_ANSWER_MS - 1);
  assert.equal((await reportsOf(connector, resting.order_id)).length, 3);
  clock.advance(1);
  const cancelled = (await reportsOf(connector, resting.order_id)).at(-1);
  assert.ok(
    cancelled?.type === 'cancelled' &&
      cancelled.request_id === `${resting.order_id}.3` &&
      cancelled.reason === 'requested' &&
      cancelled.cancelled_qty === 300,
  );

  // A market order cancelled before its fill: the fill comes first, and nothing follows it.
  const market = order('later-market', { qty: TEST_QTY.ANSWERS_LATER });
  await connector.submit(market);
  clock.advance(FIRST_FILL_DELAY_MS / 2);
  assert.deepEqual(await connector.cancel(market.order_id, cancel(market.order_id)), { status: 'pending' });
  clock.advance(60_000);
  const rs = await reportsOf(connector, market.order_id);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['accepted', 'fill'],
  );
  assert.ok(rs.slice(0, -1).every((r) => !isFinalReport(r)));
  assert.deepEqual(await connector.cancel(market.order_id, cancel(market.order_id)), { status: 'refused', reason: 'already_filled' });
});

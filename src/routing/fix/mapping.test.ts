import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OrderId } from '../../lib/ids.js';
import {
  applyExecutionReport,
  EXEC_TYPES,
  fixTimestamp,
  newOrderSingle,
  orderCancelReplaceRequest,
  orderCancelRequest,
  rejectedRequest,
  rejectReason,
  replacedTerms,
  requestRefusal,
  timeInForceOf,
  type ExecReportFields,
  type FixOrderInput,
  type OrderAtPartner,
  type ReportContext,
} from './mapping.js';

const at = Date.parse('2026-11-24T10:15:30.250Z');
const order: FixOrderInput = {
  order_id: 'ord_01m87d94nke0ptvf373jxjtzp8' as OrderId,
  instrument: 'SNTS.BRVM',
  instrument_status: 'active',
  side: 'buy',
  qty: 100,
  limit_price_cents: 1500050,
  reference_price_cents: 1500000,
};

test('a limit order: ClOrdID is the order id, ticker, exchange, side, quantity, exact price, day order', () => {
  assert.equal(fixTimestamp(at), '20261124-10:15:30.250');
  assert.deepEqual(newOrderSingle(order, { defaultAccount: 'ACC-1', transactTime: at }), {
    ClOrdID: 'ord_01m87d94nke0ptvf373jxjtzp8',
    Account: 'ACC-1',
    Instrument: { Symbol: 'SNTS', SecurityExchange: 'BRVM' },
    Side: '1',
    TransactTime: '20261124-10:15:30.250',
    OrderQtyData: { OrderQty: 100 },
    OrdType: '2',
    Price: '15000.5',
    TimeInForce: '0',
  });
});

test('a market sell with an ISIN, good till date: no price, IDSource 4, TimeInForce 6 with ExpireDate', () => {
  const body = newOrderSingle(
    { ...order, side: 'sell', limit_price_cents: null, isin: 'SN0000000019', time_in_force: 'gtd', expire_date: '2026-12-31' },
    { defaultAccount: null, transactTime: at },
  );
  assert.deepEqual(body, {
    ClOrdID: order.order_id,
    Instrument: { Symbol: 'SNTS', SecurityID: 'SN0000000019', SecurityIDSource: '4', SecurityExchange: 'BRVM' },
    Side: '2',
    TransactTime: '20261124-10:15:30.250',
    OrderQtyData: { OrderQty: 100 },
    OrdType: '1',
    TimeInForce: '6',
    ExpireDate: '20261231',
  });
  for (const [tif, code] of [
    ['gtc', '1'],
    ['ioc', '3'],
    ['fok', '4'],
  ] as const)
    assert.equal(newOrderSingle({ ...order, time_in_force: tif }, { defaultAccount: null, transactTime: at }).TimeInForce, code);
});

test("Account (1) is the order's own account, else the partner's default, else absent", () => {
  assert.equal(
    newOrderSingle({ ...order, account: 'CI-0042 7781' }, { defaultAccount: 'ACC-1', transactTime: at }).Account,
    'CI-0042 7781',
  );
  assert.equal(newOrderSingle({ ...order, account: 'CI-0042' }, { defaultAccount: null, transactTime: at }).Account, 'CI-0042');
  assert.equal(newOrderSingle({ ...order, account: null }, { defaultAccount: 'ACC-1', transactTime: at }).Account, 'ACC-1');
  assert.equal('Account' in newOrderSingle({ ...order, account: null }, { defaultAccount: null, transactTime: at }), false);
  // The cancel and the cancel/replace of an order repeat the account it was sent with.
  const sentWith = newOrderSingle({ ...order, account: 'CI-0042' }, { defaultAccount: 'ACC-1', transactTime: at });
  assert.equal(orderCancelRequest(sentWith, `${order.order_id}.1`, at).Account, 'CI-0042');
  assert.equal(
    orderCancelReplaceRequest(
      sentWith,
      `${order.order_id}.2`,
      { request_id: `${order.order_id}.2`, qty: 50, limit_price_cents: 1500000 },
      at,
    ).Account,
    'CI-0042',
  );
});

test('a cancel repeats the order and carries its own ClOrdID and the order as OrigClOrdID', () => {
  const body = newOrderSingle(order, { defaultAccount: 'ACC-1', transactTime: at });
  assert.deepEqual(orderCancelRequest(body, `${order.order_id}.1`, at + 1000), {
    OrigClOrdID: order.order_id,
    ClOrdID: `${order.order_id}.1`,
    Account: 'ACC-1',
    Instrument: { Symbol: 'SNTS', SecurityExchange: 'BRVM' },
    Side: '1',
    TransactTime: '20261124-10:15:31.250',
    OrderQtyData: { OrderQty: 100 },
  });
});

const sent: OrderAtPartner = { order_id: order.order_id, qty: 100, state: 'sent', cum_qty: 0, report_seq: 0 };
const er = (fields: Partial<ExecReportFields>): ExecReportFields => ({
  execId: 'E1',
  execType: '0',
  partnerOrderId: 'P1',
  lastQty: null,
  lastPx: null,
  ordRejReason: null,
  text: null,
  at,
  ...fields,
});
const prefix = 'fix:sgi_x';

test('New -> accepted; Trade -> partial_fill then fill, LastPx in cents, ExecID as exchange_ref', () => {
  const accepted = applyExecutionReport(sent, er({}), prefix);
  assert.ok(!('ignored' in accepted));
  assert.deepEqual(accepted.reports, [
    {
      report_id: `${prefix}:${order.order_id}:1`,
      order_id: order.order_id,
      seq: 1,
      occurred_at: '2026-11-24T10:15:30.250Z',
      type: 'accepted',
    },
  ]);
  const partial = applyExecutionReport(accepted.order, er({ execId: 'T1', execType: 'F', lastQty: '40', lastPx: '15000.25' }), prefix);
  assert.ok(!('ignored' in partial));
  assert.deepEqual(
    partial.reports.map((r) => [r.seq, r.type]),
    [[2, 'partial_fill']],
  );
  assert.deepEqual(partial.reports[0], {
    report_id: `${prefix}:${order.order_id}:2`,
    order_id: order.order_id,
    seq: 2,
    occurred_at: '2026-11-24T10:15:30.250Z',
    type: 'partial_fill',
    fill_qty: 40,
    fill_price_cents: 1500025,
    cum_qty: 40,
    leaves_qty: 60,
    exchange_ref: 'T1',
    executed_at: '2026-11-24T10:15:30.250Z',
  });
  const fill = applyExecutionReport(partial.order, er({ execId: 'T2', execType: 'F', lastQty: '60', lastPx: '15000' }), prefix);
  assert.ok(!('ignored' in fill));
  assert.deepEqual(
    fill.reports.map((r) => [r.seq, r.type]),
    [[3, 'fill']],
  );
  assert.deepEqual(fill.order, { ...sent, state: 'filled', cum_qty: 100, report_seq: 3 });
  assert.deepEqual(applyExecutionReport(fill.order, er({ execType: '4' }), prefix), { ignored: 'order is already filled' });
});

test('a Trade or Canceled that comes first is preceded by accepted; Expired ends the order cancelled', () => {
  const filled = applyExecutionReport(sent, er({ execType: 'F', lastQty: '100', lastPx: '15000.5' }), prefix);
  assert.ok(!('ignored' in filled));
  assert.deepEqual(
    filled.reports.map((r) => [r.seq, r.type]),
    [
      [1, 'accepted'],
      [2, 'fill'],
    ],
  );
  const cancelled = applyExecutionReport({ ...sent, state: 'accepted', cum_qty: 30, report_seq: 2 }, er({ execType: '4' }), prefix);
  assert.ok(!('ignored' in cancelled));
  assert.deepEqual(cancelled.reports[0], {
    report_id: `${prefix}:${order.order_id}:3`,
    order_id: order.order_id,
    seq: 3,
    occurred_at: '2026-11-24T10:15:30.250Z',
    type: 'cancelled',
    cancelled_qty: 70,
    cum_qty: 30,
    reason: 'partner',
    request_id: null,
  });
  const expired = applyExecutionReport(sent, er({ execType: 'C' }), prefix);
  assert.ok(!('ignored' in expired));
  assert.deepEqual(
    expired.reports.map((r) => r.type),
    ['accepted', 'cancelled'],
  );
  assert.deepEqual(expired.reports[1]?.type === 'cancelled' && [expired.reports[1].reason, expired.reports[1].request_id], [
    'expired',
    null,
  ]);
});

test('Rejected -> rejected with a mapped reason; after a fill the refusal of the rest is a cancel', () => {
  const rejected = applyExecutionReport(sent, er({ execType: '8', ordRejReason: 3 }), prefix);
  assert.ok(!('ignored' in rejected));
  assert.deepEqual(rejected.reports, [
    {
      report_id: `${prefix}:${order.order_id}:1`,
      order_id: order.order_id,
      seq: 1,
      occurred_at: '2026-11-24T10:15:30.250Z',
      type: 'rejected',
      reason: 'insufficient_funds',
    },
  ]);
  const rest = applyExecutionReport({ ...sent, state: 'accepted', cum_qty: 10, report_seq: 2 }, er({ execType: '8' }), prefix);
  assert.ok(!('ignored' in rest));
  assert.deepEqual(
    rest.reports.map((r) => r.type),
    ['cancelled'],
  );
});

test('reports that say nothing new, and malformed trades, add nothing', () => {
  assert.deepEqual(applyExecutionReport({ ...sent, state: 'accepted', report_seq: 1 }, er({}), prefix), {
    ignored: 'New for an order already accepted',
  });
  for (const type of ['A', '6', 'E', 'I', '3', 'D', 'G', 'H'])
    assert.ok('ignored' in applyExecutionReport(sent, er({ execType: type }), prefix), type);
  assert.ok('ignored' in applyExecutionReport(sent, er({ execType: 'Z' }), prefix));
  assert.ok('ignored' in applyExecutionReport(sent, er({ execType: 'F', lastQty: '0', lastPx: '1' }), prefix));
  assert.ok('ignored' in applyExecutionReport(sent, er({ execType: 'F', lastQty: '10', lastPx: 'x' }), prefix));
  assert.ok('ignored' in applyExecutionReport(sent, er({ execType: 'F', lastQty: '101', lastPx: '1' }), prefix));
  assert.equal(EXEC_TYPES.F?.name, 'Trade');
});

test('reject reasons: suspension and funds from Text, OrdRejReason 3, anything else sgi_rejected', () => {
  assert.equal(rejectReason(null, 'Instrument suspended'), 'instrument_suspended');
  assert.equal(rejectReason(0, 'trading halted on SNTS'), 'instrument_suspended');
  assert.equal(rejectReason(null, 'Insufficient funds'), 'insufficient_funds');
  assert.equal(rejectReason(99, 'Provision insuffisante'), 'insufficient_funds');
  assert.equal(rejectReason(3, null), 'insufficient_funds');
  assert.equal(rejectReason(1, 'Unknown symbol'), 'sgi_rejected');
  assert.equal(rejectReason(null, null), 'sgi_rejected');
});

test('a refused cancel or amend reads the order as the report log has it', () => {
  // unknown_order only for an order this connector never sent (the router may then cancel it here).
  assert.equal(requestRefusal('cancel', undefined), 'unknown_order');
  assert.equal(requestRefusal('cancel', { ...sent, state: 'filled' }), 'already_filled');
  assert.equal(requestRefusal('cancel', { ...sent, state: 'rejected' }), 'already_rejected');
  // An order sent and not yet acknowledged: a refusal (whatever its CxlRejReason) leaves it as it is.
  assert.equal(requestRefusal('cancel', sent), 'partner_refused');
  assert.equal(requestRefusal('cancel', { ...sent, state: 'accepted' }), 'partner_refused');
  assert.equal(requestRefusal('amend', { ...sent, state: 'cancelled' }), 'already_cancelled');
  assert.equal(requestRefusal('amend', { ...sent, state: 'accepted' }), 'partner_refused');
  assert.deepEqual(['1', '2', '9', null].map(rejectedRequest), ['cancel', 'amend', null, null]);
});

const open: OrderAtPartner = { ...sent, state: 'accepted', cum_qty: 30, report_seq: 2 };
const context = (fields: Partial<ReportContext>): ReportContext => ({ cancel: null, amend: null, timeInForce: 'day', ...fields });

test("Canceled answers the service's cancel with its reason; on its own it is the partner's, or unfilled for ioc and fok", () => {
  const asked = applyExecutionReport(
    open,
    er({ execType: '4' }),
    prefix,
    context({ cancel: { request_id: `${order.order_id}.1`, reason: 'expired' } }),
  );
  assert.ok(!('ignored' in asked));
  assert.deepEqual(asked.reports[0], {
    report_id: `${prefix}:${order.order_id}:3`,
    order_id: order.order_id,
    seq: 3,
    occurred_at: '2026-11-24T10:15:30.250Z',
    type: 'cancelled',
    cancelled_qty: 70,
    cum_qty: 30,
    reason: 'expired',
    request_id: `${order.order_id}.1`,
  });
  for (const [timeInForce, execType, reason] of [
    ['ioc', '4', 'unfilled'],
    ['fok', '4', 'unfilled'],
    ['ioc', 'C', 'unfilled'],
    ['gtd', 'C', 'expired'],
    ['gtc', '4', 'partner'],
  ] as const) {
    const outcome = applyExecutionReport(open, er({ execType }), prefix, context({ timeInForce }));
    assert.ok(!('ignored' in outcome));
    assert.deepEqual(
      outcome.reports[0]?.type === 'cancelled' && [outcome.reports[0].reason, outcome.reports[0].request_id],
      [reason, null],
      `${timeInForce} ${execType}`,
    );
  }
});

test('Replaced answers the waiting amend with the terms the partner reports, else those asked; later fills count against the new quantity', () => {
  const amend = { request_id: `${order.order_id}.2`, qty: 120, limit_price_cents: 1500100 };
  const replaced = applyExecutionReport(open, er({ execType: '5', orderQty: '150', price: '15001.5' }), prefix, context({ amend }));
  assert.ok(!('ignored' in replaced));
  assert.deepEqual(replaced.reports[0], {
    report_id: `${prefix}:${order.order_id}:3`,
    order_id: order.order_id,
    seq: 3,
    occurred_at: '2026-11-24T10:15:30.250Z',
    type: 'replaced',
    request_id: amend.request_id,
    qty: 150,
    limit_price_cents: 1500150,
    cum_qty: 30,
    leaves_qty: 120,
  });
  assert.deepEqual(replaced.order, { ...open, qty: 150, report_seq: 3 });
  const asked = applyExecutionReport(open, er({ execType: '5' }), prefix, context({ amend }));
  assert.ok(!('ignored' in asked));
  assert.deepEqual(asked.reports[0]?.type === 'replaced' && [asked.reports[0].qty, asked.reports[0].limit_price_cents], [120, 1500100]);
  const fill = applyExecutionReport(replaced.order, er({ execId: 'T9', execType: 'F', lastQty: '120', lastPx: '15001.5' }), prefix);
  assert.ok(!('ignored' in fill));
  assert.deepEqual(
    fill.reports.map((r) => r.type),
    ['fill'],
  );
  assert.ok('ignored' in applyExecutionReport(open, er({ execType: '5' }), prefix), 'no amend waiting');
  assert.ok(
    'ignored' in applyExecutionReport(open, er({ execType: '5', orderQty: '30' }), prefix, context({ amend })),
    'not above what executed',
  );
});

test('an amend is an OrderCancelReplaceRequest: its own ClOrdID, OrigClOrdID the current one, the new quantity and price; a Replaced makes them current', () => {
  const body = newOrderSingle({ ...order, time_in_force: 'gtd', expire_date: '2026-12-31' }, { defaultAccount: 'ACC-1', transactTime: at });
  const terms = { request_id: `${order.order_id}.1`, qty: 120, limit_price_cents: 1500100 };
  assert.deepEqual(orderCancelReplaceRequest(body, terms.request_id, terms, at), {
    OrigClOrdID: order.order_id,
    ClOrdID: terms.request_id,
    Account: 'ACC-1',
    Instrument: { Symbol: 'SNTS', SecurityExchange: 'BRVM' },
    Side: '1',
    TransactTime: '20261124-10:15:30.250',
    OrderQtyData: { OrderQty: 120 },
    OrdType: '2',
    Price: '15001',
    TimeInForce: '6',
    ExpireDate: '20261231',
  });
  const current = replacedTerms(body, terms.request_id, terms);
  assert.equal(timeInForceOf(current), 'gtd');
  const next = orderCancelRequest(current, `${order.order_id}.2`, at);
  assert.deepEqual([next.OrigClOrdID, next.OrderQtyData], [terms.request_id, { OrderQty: 120 }]);
  assert.equal(orderCancelReplaceRequest(current, `${order.order_id}.3`, { ...terms, qty: 130 }, at).OrigClOrdID, terms.request_id);
});

test('a Trade at a LastPx that rounds to 0 cents adds no fill, and the order at the partner does not move', () => {
  const accepted = applyExecutionReport(sent, er({}), prefix);
  assert.ok(!('ignored' in accepted));
  for (const lastPx of ['0.004', '0'])
    assert.deepEqual(applyExecutionReport(accepted.order, er({ execId: 'T1', execType: 'F', lastQty: '40', lastPx }), prefix), {
      ignored: `Trade without a usable LastPx (31): ${lastPx}`,
    });
  const halfCent = applyExecutionReport(accepted.order, er({ execId: 'T1', execType: 'F', lastQty: '40', lastPx: '0.005' }), prefix);
  assert.ok(!('ignored' in halfCent));
  assert.equal(halfCent.reports[0]?.type === 'partial_fill' && halfCent.reports[0].fill_price_cents, 1);
});

test('a Rejected with OrdRejReason 6 (duplicate order) after the order was acknowledged refuses a copy of it: nothing changes; before, the order fails', () => {
  const accepted = applyExecutionReport(sent, er({}), prefix);
  assert.ok(!('ignored' in accepted));
  const duplicate = er({ execId: 'R1', execType: '8', ordRejReason: 6, text: 'Duplicate ClOrdID' });
  assert.deepEqual(applyExecutionReport(accepted.order, duplicate, prefix), {
    ignored: 'Rejected as a duplicate order (OrdRejReason 6): the order it copies stands',
  });
  const unacknowledged = applyExecutionReport(sent, duplicate, prefix);
  assert.ok(!('ignored' in unacknowledged));
  assert.equal(unacknowledged.reports[0]?.type, 'rejected');
  const refused = applyExecutionReport(
    accepted.order,
    er({ execId: 'R2', execType: '8', ordRejReason: 1, text: 'Unknown symbol' }),
    prefix,
  );
  assert.ok(!('ignored' in refused));
  assert.equal(refused.reports[0]?.type, 'rejected');
});

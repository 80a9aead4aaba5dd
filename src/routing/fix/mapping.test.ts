import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OrderId } from '../../lib/ids.js';
import { applyExecutionReport, cancelRefusal, EXEC_TYPES, fixTimestamp, newOrderSingle, orderCancelRequest, rejectReason, type ExecReportFields, type FixOrderInput, type OrderAtPartner } from './mapping.js';

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
  assert.deepEqual(newOrderSingle(order, { account: 'ACC-1', transactTime: at }), {
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
  const body = newOrderSingle({ ...order, side: 'sell', limit_price_cents: null, isin: 'SN0000000019', time_in_force: 'gtd', expire_date: '2026-12-31' }, { account: null, transactTime: at });
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
  for (const [tif, code] of [['gtc', '1'], ['ioc', '3'], ['fok', '4']] as const) assert.equal(newOrderSingle({ ...order, time_in_force: tif }, { account: null, transactTime: at }).TimeInForce, code);
});

test('a cancel repeats the order and carries its own ClOrdID and the order as OrigClOrdID', () => {
  const body = newOrderSingle(order, { account: 'ACC-1', transactTime: at });
  assert.deepEqual(orderCancelRequest(body, `${order.order_id}-C1`, at + 1000), {
    OrigClOrdID: order.order_id,
    ClOrdID: `${order.order_id}-C1`,
    Account: 'ACC-1',
    Instrument: { Symbol: 'SNTS', SecurityExchange: 'BRVM' },
    Side: '1',
    TransactTime: '20261124-10:15:31.250',
    OrderQtyData: { OrderQty: 100 },
  });
});

const sent: OrderAtPartner = { order_id: order.order_id, qty: 100, state: 'sent', cum_qty: 0, report_seq: 0 };
const er = (fields: Partial<ExecReportFields>): ExecReportFields => ({ execId: 'E1', execType: '0', partnerOrderId: 'P1', lastQty: null, lastPx: null, ordRejReason: null, text: null, at, ...fields });
const prefix = 'fix:sgi_x';

test('New -> accepted; Trade -> partial_fill then fill, LastPx in cents, ExecID as exchange_ref', () => {
  const accepted = applyExecutionReport(sent, er({}), prefix);
  assert.ok(!('ignored' in accepted));
  assert.deepEqual(accepted.reports, [{ report_id: `${prefix}:${order.order_id}:1`, order_id: order.order_id, seq: 1, occurred_at: '2026-11-24T10:15:30.250Z', type: 'accepted' }]);
  const partial = applyExecutionReport(accepted.order, er({ execId: 'T1', execType: 'F', lastQty: '40', lastPx: '15000.25' }), prefix);
  assert.ok(!('ignored' in partial));
  assert.deepEqual(partial.reports.map((r) => [r.seq, r.type]), [[2, 'partial_fill']]);
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
  assert.deepEqual(fill.reports.map((r) => [r.seq, r.type]), [[3, 'fill']]);
  assert.deepEqual(fill.order, { ...sent, state: 'filled', cum_qty: 100, report_seq: 3 });
  assert.deepEqual(applyExecutionReport(fill.order, er({ execType: '4' }), prefix), { ignored: 'order is already filled' });
});

test('a Trade or Canceled that comes first is preceded by accepted; Expired ends the order cancelled', () => {
  const filled = applyExecutionReport(sent, er({ execType: 'F', lastQty: '100', lastPx: '15000.5' }), prefix);
  assert.ok(!('ignored' in filled));
  assert.deepEqual(filled.reports.map((r) => [r.seq, r.type]), [[1, 'accepted'], [2, 'fill']]);
  const cancelled = applyExecutionReport({ ...sent, state: 'accepted', cum_qty: 30, report_seq: 2 }, er({ execType: '4' }), prefix);
  assert.ok(!('ignored' in cancelled));
  assert.deepEqual(cancelled.reports[0], { report_id: `${prefix}:${order.order_id}:3`, order_id: order.order_id, seq: 3, occurred_at: '2026-11-24T10:15:30.250Z', type: 'cancelled', cancelled_qty: 70, cum_qty: 30 });
  const expired = applyExecutionReport(sent, er({ execType: 'C' }), prefix);
  assert.ok(!('ignored' in expired));
  assert.deepEqual(expired.reports.map((r) => r.type), ['accepted', 'cancelled']);
});

test('Rejected -> rejected with a mapped reason; after a fill the refusal of the rest is a cancel', () => {
  const rejected = applyExecutionReport(sent, er({ execType: '8', ordRejReason: 3 }), prefix);
  assert.ok(!('ignored' in rejected));
  assert.deepEqual(rejected.reports, [{ report_id: `${prefix}:${order.order_id}:1`, order_id: order.order_id, seq: 1, occurred_at: '2026-11-24T10:15:30.250Z', type: 'rejected', reason: 'insufficient_funds' }]);
  const rest = applyExecutionReport({ ...sent, state: 'accepted', cum_qty: 10, report_seq: 2 }, er({ execType: '8' }), prefix);
  assert.ok(!('ignored' in rest));
  assert.deepEqual(rest.reports.map((r) => r.type), ['cancelled']);
});

test('reports that say nothing new, and malformed trades, add nothing', () => {
  assert.deepEqual(applyExecutionReport({ ...sent, state: 'accepted', report_seq: 1 }, er({}), prefix), { ignored: 'New for an order already accepted' });
  for (const type of ['A', '6', 'E', 'I', '3', 'D', '5', 'G', 'H']) assert.ok('ignored' in applyExecutionReport(sent, er({ execType: type }), prefix), type);
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

test('a refused cancel reads the order as the report log has it', () => {
  assert.equal(cancelRefusal(undefined, null), 'unknown_order');
  assert.equal(cancelRefusal({ ...sent, state: 'filled' }, 0), 'already_filled');
  assert.equal(cancelRefusal({ ...sent, state: 'rejected' }, null), 'already_rejected');
  assert.equal(cancelRefusal(sent, 1), 'unknown_order');
  assert.equal(cancelRefusal({ ...sent, state: 'accepted' }, 1), 'partner_refused');
  assert.equal(cancelRefusal({ ...sent, state: 'accepted' }, 0), 'partner_refused');
});

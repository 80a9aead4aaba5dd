import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FAILURE_REASONS } from '../orders/core/lifecycle.js';
import { ConnectorUnavailableError, classifyReport, isFinalReport, type ExecutionReport } from './connector.js';
import type { OrderId } from '../lib/ids.js';

test('classifyReport: next, duplicate or gap relative to the last applied seq', () => {
  assert.equal(classifyReport(0, { seq: 1 }), 'next');
  assert.equal(classifyReport(3, { seq: 4 }), 'next');
  assert.equal(classifyReport(3, { seq: 3 }), 'duplicate');
  assert.equal(classifyReport(3, { seq: 1 }), 'duplicate');
  assert.equal(classifyReport(3, { seq: 5 }), 'gap');
  assert.equal(classifyReport(0, { seq: 2 }), 'gap');
});

test('final reports: fill, cancelled, rejected', () => {
  const base = { report_id: 'x', order_id: 'ord_x' as OrderId, seq: 1, occurred_at: '2026-11-22T10:00:00.000Z' };
  const exec = {
    fill_qty: 1,
    fill_price_cents: 1,
    cum_qty: 1,
    leaves_qty: 0,
    exchange_ref: 'BRVM-20261122-000001',
    executed_at: base.occurred_at,
  };
  const cases: [ExecutionReport, boolean][] = [
    [{ ...base, type: 'accepted' }, false],
    [{ ...base, ...exec, type: 'partial_fill', leaves_qty: 1 }, false],
    [{ ...base, ...exec, type: 'fill' }, true],
    [{ ...base, type: 'rejected', reason: 'sgi_rejected' }, true],
    [{ ...base, type: 'cancelled', cancelled_qty: 1, cum_qty: 0, reason: 'requested', request_id: 'ord_x.1' }, true],
    [{ ...base, type: 'replaced', request_id: 'ord_x.2', qty: 2, limit_price_cents: 5, cum_qty: 0, leaves_qty: 2 }, false],
    [{ ...base, type: 'request_refused', request_id: 'ord_x.3', request: 'amend', reason: 'partner_refused' }, false],
  ];
  for (const [r, final] of cases) assert.equal(isFinalReport(r), final, r.type);
});

test('ConnectorUnavailableError carries a stable code and the connector', () => {
  const err = new ConnectorUnavailableError('sgi_a', undefined, { retryAfterMs: 5000 });
  assert.ok(err instanceof Error);
  assert.equal(err.code, 'connector_unavailable');
  assert.equal(err.connector, 'sgi_a');
  assert.equal(err.retryAfterMs, 5000);
  assert.match(err.message, /sgi_a/);
  assert.deepEqual([...FAILURE_REASONS], ['sgi_rejected', 'insufficient_funds', 'instrument_suspended']);
});

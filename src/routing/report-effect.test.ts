import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OrderId } from '../lib/ids.js';
import type { OrderRow } from '../orders/order.table.js';
import type { ExecutionReport } from './connector.js';
import { refusalOf } from '../orders/order.mapping.js';
import { reportEffect } from './report-effect.js';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const AT = '2026-11-23T11:59:59.000Z';
const ID = 'ord_01kdvdna00e5fsxhz2kkrzpb8n' as OrderId;

function row(fields: Partial<OrderRow> = {}): OrderRow {
  return {
    id: ID,
    client_id: 'cli_x',
    status: 'routed',
    rcpt_to: 'sgi_x',
    kyc_attestation_id: 'att_x',
    kyc_attestation_sha256: 'x',
    subject_id: 's',
    kyc_level: 'KYC3',
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 100,
    limit_price_cents: 1000,
    reference_price_cents: 1000,
    filled_qty: 0,
    fill_notional_cents: '0',
    failure_reason: null,
    client_metadata: null,
    connector: 'sandbox',
    last_report_seq: 1,
    route_attempts: 0,
    next_route_at: null,
    route_lease_until: null,
    cancel_requested_at: null,
    created_at: NOW - 60_000,
    updated_at: NOW - 60_000,
    time_in_force: 'day',
    expire_date: null,
    expires_at: NOW + 3_600_000,
    expiry_due_at: NOW + 3_600_000,
    cancel_reason: null,
    pending_request: null,
    pending_request_id: null,
    cancel_request_reason: null,
    amend_qty: null,
    amend_limit_price_cents: null,
    requests_made: 0,
    last_refusal: null,
    account: null,
    ...fields,
  };
}
const pendingCancel = {
  pending_request: 'pending_cancel',
  pending_request_id: `${ID}.1`,
  cancel_request_reason: 'requested',
  requests_made: 1,
} as const;
const pendingAmend = {
  pending_request: 'pending_amend',
  pending_request_id: `${ID}.1`,
  amend_qty: 200,
  amend_limit_price_cents: 1000,
  requests_made: 1,
} as const;
const base = { report_id: 'r', order_id: ID, seq: 2, occurred_at: AT };
const fill = (qty: number, cum: number): ExecutionReport => ({
  ...base,
  type: cum === 100 ? 'fill' : 'partial_fill',
  fill_qty: qty,
  fill_price_cents: 990,
  cum_qty: cum,
  leaves_qty: 100 - cum,
  exchange_ref: 'BRVM-20261123-000001',
  executed_at: AT,
});
const cancelled = (reason: 'requested' | 'expired' | 'unfilled' | 'partner', requestId: string | null): ExecutionReport => ({
  ...base,
  type: 'cancelled',
  cancelled_qty: 100,
  cum_qty: 0,
  reason,
  request_id: requestId,
});

test('a cancelled report: cancelled with its reason, answering a pending cancel, leaving the expiry queue', () => {
  for (const reason of ['requested', 'expired', 'unfilled', 'partner'] as const) {
    const effect = reportEffect(row(pendingCancel), cancelled(reason, reason === 'partner' ? null : `${ID}.1`), NOW);
    assert.ok(effect.applies);
    assert.deepEqual(effect.events, ['order.cancelled']);
    assert.deepEqual(
      [
        effect.changes.status,
        effect.changes.cancel_reason,
        effect.changes.pending_request,
        effect.changes.expiry_due_at,
        effect.changes.last_report_seq,
      ],
      ['cancelled', reason, null, null, 2],
    );
  }
  const amendRefused = reportEffect(row(pendingAmend), cancelled('partner', null), NOW);
  assert.ok(amendRefused.applies);
  assert.deepEqual(amendRefused.events, ['order.cancelled', 'order.request_refused']);
  assert.deepEqual(refusalOf(amendRefused.changes.last_refusal ?? null), { request: 'amend', reason: 'already_cancelled', refused_at: AT });
});

test('the final fill refuses a pending cancel (already_filled); a partial fill leaves it waiting', () => {
  const partial = reportEffect(row(pendingCancel), fill(40, 40), NOW);
  assert.ok(partial.applies);
  assert.deepEqual(partial.events, ['order.executed']);
  assert.equal(partial.changes.pending_request, undefined, 'unchanged');
  assert.deepEqual(partial.execution, { fill_qty: 40, fill_price_cents: 990, exchange_ref: 'BRVM-20261123-000001', executed_at: AT });
  const last = reportEffect(row(pendingCancel), fill(100, 100), NOW);
  assert.ok(last.applies);
  assert.deepEqual(last.events, ['order.executed', 'order.request_refused']);
  assert.deepEqual([last.changes.status, last.changes.pending_request, last.changes.expiry_due_at], ['filled', null, null]);
  assert.deepEqual(refusalOf(last.changes.last_refusal ?? null), { request: 'cancel', reason: 'already_filled', refused_at: AT });
  const noneWaiting = reportEffect(row(), fill(100, 100), NOW);
  assert.ok(noneWaiting.applies);
  assert.deepEqual(noneWaiting.events, ['order.executed']);
  assert.equal(noneWaiting.changes.last_refusal, undefined);
});

test('replaced: new terms, the matching pending amend answered; request_refused: recorded, the matching request ended', () => {
  const replaced: ExecutionReport = {
    ...base,
    type: 'replaced',
    request_id: `${ID}.1`,
    qty: 200,
    limit_price_cents: 1000,
    cum_qty: 0,
    leaves_qty: 200,
  };
  const effect = reportEffect(row(pendingAmend), replaced, NOW);
  assert.ok(effect.applies);
  assert.deepEqual(effect.events, ['order.amended']);
  assert.deepEqual(
    [effect.changes.qty, effect.changes.pending_request, effect.changes.amend_qty, effect.changes.status],
    [200, null, null, undefined],
  );
  const stale = reportEffect(row({ ...pendingCancel, pending_request_id: `${ID}.2` }), replaced, NOW);
  assert.ok(stale.applies);
  assert.equal(stale.changes.pending_request, undefined, 'a later cancel goes on');
  assert.equal(
    reportEffect(row({ filled_qty: 200, status: 'partially_filled', fill_notional_cents: '200000', qty: 300 }), replaced, NOW).applies,
    false,
    'not above filled',
  );

  const refused: ExecutionReport = { ...base, type: 'request_refused', request_id: `${ID}.1`, request: 'amend', reason: 'partner_refused' };
  const r = reportEffect(row(pendingAmend), refused, NOW);
  assert.ok(r.applies);
  assert.deepEqual(r.events, ['order.request_refused']);
  assert.deepEqual([r.changes.pending_request, r.changes.qty], [null, undefined]);
  assert.deepEqual(refusalOf(r.changes.last_refusal ?? null), { request: 'amend', reason: 'partner_refused', refused_at: AT });
  assert.equal(
    reportEffect(row({ status: 'filled', filled_qty: 100, fill_notional_cents: '99000' }), refused, NOW).applies,
    false,
    'nothing follows a final report',
  );
});

test('accepted and rejected; reports that do not fit are not applied', () => {
  const accepted = reportEffect(
    row({ status: 'created', last_report_seq: 0, ...pendingCancel }),
    { ...base, seq: 1, type: 'accepted' },
    NOW,
  );
  assert.ok(accepted.applies);
  assert.deepEqual([accepted.changes.status, accepted.changes.next_route_at], ['routed', NOW], 'a waiting cancel is sent now');
  const rejected = reportEffect(row(pendingAmend), { ...base, type: 'rejected', reason: 'instrument_suspended' }, NOW);
  assert.ok(rejected.applies);
  assert.deepEqual(rejected.events, ['order.failed', 'order.request_refused']);
  assert.deepEqual(refusalOf(rejected.changes.last_refusal ?? null)?.reason, 'already_rejected');
  const late = reportEffect(row({ status: 'cancelled' }), fill(10, 10), NOW);
  assert.equal(late.applies, false);
  assert.deepEqual(late.changes, { last_report_seq: 2, updated_at: NOW });
});

import type { OrderRow } from '../../src/orders/order.table.js';

/**
 * A stored order row for tests that write orders directly (many of them, or with ids and times no
 * request would give): a routed market buy of one share, with `overrides` on top.
 */
export function orderRow(overrides: Partial<OrderRow> & Pick<OrderRow, 'id' | 'client_id' | 'created_at'>): OrderRow {
  return {
    status: 'routed',
    rcpt_to: 'sgi_x',
    kyc_attestation_id: 'att_x',
    kyc_attestation_sha256: 'x',
    subject_id: 'subject-1',
    kyc_level: 'KYC3',
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 1,
    limit_price_cents: null,
    reference_price_cents: 100,
    filled_qty: 0,
    fill_notional_cents: '0',
    failure_reason: null,
    client_metadata: null,
    connector: 'sandbox',
    last_report_seq: 0,
    route_attempts: 0,
    next_route_at: null,
    route_lease_until: null,
    cancel_requested_at: null,
    updated_at: overrides.created_at,
    time_in_force: 'gtc',
    expire_date: null,
    expires_at: null,
    expiry_due_at: null,
    cancel_reason: null,
    pending_request: null,
    pending_request_id: null,
    cancel_request_reason: null,
    amend_qty: null,
    amend_limit_price_cents: null,
    requests_made: 0,
    last_refusal: null,
    test_clock_id: null,
    account: null,
    ...overrides,
  };
}

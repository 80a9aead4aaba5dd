import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amendConflict, capIncreaseCents, checkAmendValues, heldAgainstCap, sumHeld, type CappedOrder } from './amend.js';
import { AT_PAR } from './caps.js';

const routedLimit = { status: 'routed', side: 'buy', qty: 100, filled_qty: 0, limit_price_cents: 1000, pending_request: null } as const;

test('only a routed or partially filled limit order with no request waiting can be amended', () => {
  assert.equal(amendConflict(routedLimit), null);
  assert.equal(amendConflict({ ...routedLimit, status: 'partially_filled', filled_qty: 10 }), null);
  assert.match(amendConflict({ ...routedLimit, limit_price_cents: null }) ?? '', /market order/);
  for (const status of ['created', 'filled', 'failed', 'cancelled'] as const)
    assert.match(amendConflict({ ...routedLimit, status }) ?? '', new RegExp(status));
  assert.match(amendConflict({ ...routedLimit, pending_request: 'pending_cancel' }) ?? '', /cancel/);
  assert.match(amendConflict({ ...routedLimit, pending_request: 'pending_amend' }) ?? '', /amend/);
});

test('the new values change something and keep qty above what filled', () => {
  assert.deepEqual(checkAmendValues(routedLimit, { qty: 200 }), []);
  assert.deepEqual(checkAmendValues(routedLimit, { limit_price_cents: 1001 }), []);
  assert.deepEqual(
    checkAmendValues(routedLimit, { qty: 100 }).map((d) => [d.field, d.rule]),
    [['qty', 'unchanged']],
  );
  assert.deepEqual(
    checkAmendValues(routedLimit, { limit_price_cents: 1000 }).map((d) => [d.field, d.rule]),
    [['limit_price_cents', 'unchanged']],
  );
  const partly = { ...routedLimit, status: 'partially_filled', filled_qty: 40 } as const;
  assert.deepEqual(checkAmendValues(partly, { qty: 41 }), []);
  assert.deepEqual(
    checkAmendValues(partly, { qty: 40 }).map((d) => [d.field, d.rule, d.value]),
    [['qty', 'above_filled', 40]],
  );
  assert.deepEqual(
    checkAmendValues(partly, { qty: 10, limit_price_cents: 5 }).map((d) => d.rule),
    ['above_filled'],
  );
});

test('the cap counts only the increase, and never for a sell', () => {
  assert.equal(capIncreaseCents(routedLimit, { qty: 150 }), 50_000n);
  assert.equal(capIncreaseCents(routedLimit, { limit_price_cents: 1100 }), 10_000n);
  assert.equal(capIncreaseCents(routedLimit, { qty: 150, limit_price_cents: 500 }), 0n, 'smaller in all');
  assert.equal(capIncreaseCents(routedLimit, { qty: 50 }), 0n);
  assert.equal(capIncreaseCents({ ...routedLimit, side: 'sell' }, { qty: 1_000_000 }), 0n);
  assert.equal(capIncreaseCents({ ...routedLimit, limit_price_cents: null }, { qty: 1_000_000 }), 0n, 'a market order is never amended');
});

test("the increase counts in FCFA at the order's rate, each amount rounded up as the cap sums it", () => {
  // 1 GHS = 41.7 FCFA: 100 x 10.00 GHS = 41,700 FCFA; 150 x 10.00 GHS = 62,550 FCFA.
  const cedi = { num: 417n, den: 10n };
  assert.equal(capIncreaseCents(routedLimit, { qty: 150 }, cedi), 6_255_000n - 4_170_000n);
  // At 1/3 FCFA a cent, 3 cents count 1 and 4 count 2 (rounded up), while 2 and 3 both count 1.
  assert.equal(capIncreaseCents({ ...routedLimit, qty: 3, limit_price_cents: 1 }, { qty: 4 }, { num: 1n, den: 3n }), 1n);
  assert.equal(capIncreaseCents({ ...routedLimit, qty: 2, limit_price_cents: 1 }, { qty: 3 }, { num: 1n, den: 3n }), 0n);
  assert.equal(capIncreaseCents(routedLimit, { qty: 150 }), capIncreaseCents(routedLimit, { qty: 150 }, AT_PAR));
});

test('a pending amend holds the larger of the order as it is and as amended', () => {
  const base: CappedOrder = {
    side: 'buy',
    status: 'routed',
    qty: 100,
    limit_price_cents: 1000,
    market_price_cents: 900,
    fill_notional_cents: 0n,
    fcfa_rate: AT_PAR,
    pending_request: null,
    amend_qty: null,
    amend_limit_price_cents: null,
  };
  assert.equal(heldAgainstCap(base), 100_000n);
  assert.equal(heldAgainstCap({ ...base, pending_request: 'pending_amend', amend_qty: 300, amend_limit_price_cents: 1000 }), 300_000n);
  assert.equal(heldAgainstCap({ ...base, pending_request: 'pending_amend', amend_qty: 10, amend_limit_price_cents: 1000 }), 100_000n);
  assert.equal(heldAgainstCap({ ...base, pending_request: 'pending_cancel' }), 100_000n);
  assert.equal(
    heldAgainstCap({
      ...base,
      status: 'cancelled',
      fill_notional_cents: 7n,
      pending_request: 'pending_amend',
      amend_qty: 300,
      amend_limit_price_cents: 1000,
    }),
    7n,
    'cancelled: what filled',
  );
  assert.equal(sumHeld([base, { ...base, side: 'sell' }, { ...base, status: 'failed' }]), 100_000n);
});

test("the month's sum converts each order at its own rate, the pending amend included", () => {
  const base: CappedOrder = {
    side: 'buy',
    status: 'routed',
    qty: 100,
    limit_price_cents: 1000,
    market_price_cents: 900,
    fill_notional_cents: 0n,
    fcfa_rate: AT_PAR,
    pending_request: null,
    amend_qty: null,
    amend_limit_price_cents: null,
  };
  const cedi = {
    ...base,
    fcfa_rate: { num: 417n, den: 10n },
    pending_request: 'pending_amend',
    amend_qty: 200,
    amend_limit_price_cents: 1000,
  } as const;
  assert.equal(sumHeld([base, cedi]), 100_000n + 8_340_000n);
  // Rounded up per order: 1 cent at 1/3 FCFA counts 1 cent, twice.
  const third = { ...base, qty: 1, limit_price_cents: 1, fcfa_rate: { num: 1n, den: 3n } };
  assert.equal(sumHeld([third, third]), 2n);
});

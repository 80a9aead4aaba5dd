import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AT_PAR,
  MONTHLY_CAP_CENTS,
  capCents,
  checkCap,
  committedNotional,
  monthWindow,
  orderNotionalCents,
  remainingAllowance,
  sumCommitted,
  toFcfaCents,
  type CommittedOrderInput,
} from './caps.js';
import { ORDER_STATUSES } from './state-machine.js';

test('caps in cents: KYC1 100,000 FCFA, KYC2 5,000,000 FCFA, KYC3 unlimited', () => {
  assert.equal(capCents('KYC1'), 10_000_000n);
  assert.equal(capCents('KYC2'), 500_000_000n);
  assert.equal(capCents('KYC3'), null);
  assert.ok(Object.isFrozen(MONTHLY_CAP_CENTS));
});

test('order notional: limit price, else the market worst price; sells count nothing', () => {
  assert.equal(orderNotionalCents({ side: 'buy', qty: 10, limit_price_cents: 1_500_000, market_price_cents: 1_550_000 }), 15_000_000n);
  assert.equal(orderNotionalCents({ side: 'buy', qty: 10, limit_price_cents: null, market_price_cents: 1_550_000 }), 15_500_000n);
  assert.equal(orderNotionalCents({ side: 'buy', qty: 10, market_price_cents: 1_550_000 }), 15_500_000n);
  assert.equal(orderNotionalCents({ side: 'sell', qty: 10, limit_price_cents: 1_500_000, market_price_cents: 1_550_000 }), 0n);
  assert.equal(orderNotionalCents({ side: 'sell', qty: 1_000_000_000, market_price_cents: 1_000_000_000_000 }), 0n);
  assert.equal(
    orderNotionalCents({ side: 'buy', qty: 1_000_000_000, limit_price_cents: 1_000_000_000_000, market_price_cents: 1 }),
    10n ** 21n,
    'beyond 2^53, exact',
  );
});

test('committed notional per status', () => {
  const base = { side: 'buy', qty: 100, limit_price_cents: 1_000, market_price_cents: 2_000, fcfa_rate: AT_PAR } as const;
  const expected: Record<string, bigint> = {
    created: 100_000n,
    routed: 100_000n,
    partially_filled: 100_000n,
    filled: 100_000n,
    failed: 0n,
    cancelled: 29_700n, // what was filled, not qty x limit
  };
  for (const status of ORDER_STATUSES) {
    const o: CommittedOrderInput = { ...base, status, fill_notional_cents: status === 'cancelled' ? 29_700n : 0n };
    assert.equal(committedNotional(o), expected[status], status);
  }
  assert.equal(committedNotional({ ...base, status: 'cancelled', fill_notional_cents: 0n }), 0n, 'cancelled before any fill');
  assert.equal(
    committedNotional({ ...base, limit_price_cents: null, status: 'routed', fill_notional_cents: 0n }),
    200_000n,
    'market: its worst price',
  );
  for (const status of ORDER_STATUSES) {
    assert.equal(
      committedNotional({ ...base, side: 'sell', status, fill_notional_cents: status === 'cancelled' ? 29_700n : 0n }),
      0n,
      `sell ${status}`,
    );
  }
});

test('sumCommitted adds a month of orders', () => {
  const orders: CommittedOrderInput[] = [
    { side: 'buy', qty: 2, limit_price_cents: 500, market_price_cents: 1, status: 'filled', fill_notional_cents: 990n, fcfa_rate: AT_PAR },
    { side: 'buy', qty: 3, limit_price_cents: null, market_price_cents: 100, status: 'routed', fill_notional_cents: 0n, fcfa_rate: AT_PAR },
    { side: 'buy', qty: 9, limit_price_cents: 100, market_price_cents: 100, status: 'failed', fill_notional_cents: 0n, fcfa_rate: AT_PAR },
    {
      side: 'buy',
      qty: 9,
      limit_price_cents: 100,
      market_price_cents: 100,
      status: 'cancelled',
      fill_notional_cents: 250n,
      fcfa_rate: AT_PAR,
    },
    {
      side: 'sell',
      qty: 9,
      limit_price_cents: 100,
      market_price_cents: 100,
      status: 'filled',
      fill_notional_cents: 900n,
      fcfa_rate: AT_PAR,
    },
  ];
  assert.equal(sumCommitted(orders), 1_000n + 300n + 0n + 250n + 0n);
  assert.equal(sumCommitted([]), 0n);
});

test("cedi amounts count in FCFA at their day's rate, each rounded up to the next FCFA cent", () => {
  const cedi = { num: 554_012n, den: 10_000n }; // 55.4012 FCFA per cedi
  assert.equal(toFcfaCents(100n, cedi), 5_541n, '1 cedi = 55.4012 FCFA = 5,540.12 FCFA cents, rounded up');
  assert.equal(toFcfaCents(1n, cedi), 56n, 'a pesewa is 0.554012 FCFA: 56 cents, not 55');
  assert.equal(toFcfaCents(10_000n, { num: 50n, den: 1n }), 500_000n, 'a whole rate is exact');
  assert.equal(toFcfaCents(0n, cedi), 0n);
  assert.equal(toFcfaCents(123_456_789n, AT_PAR), 123_456_789n, 'XOF and XAF count at par');
  assert.equal(toFcfaCents(10n ** 21n, cedi), (10n ** 21n * 554_012n + 9_999n) / 10_000n, 'exact beyond 2^64');
  // A month of orders in two currencies: each order converts at its own rate and rounds on its own.
  const orders: CommittedOrderInput[] = [
    { side: 'buy', qty: 3, limit_price_cents: 1, market_price_cents: 1, status: 'routed', fill_notional_cents: 0n, fcfa_rate: cedi },
    {
      side: 'buy',
      qty: 3,
      limit_price_cents: 1,
      market_price_cents: 1,
      status: 'routed',
      fill_notional_cents: 0n,
      fcfa_rate: { num: 60n, den: 1n },
    },
    { side: 'buy', qty: 1, limit_price_cents: 700, market_price_cents: 1, status: 'filled', fill_notional_cents: 0n, fcfa_rate: AT_PAR },
    { side: 'buy', qty: 9, limit_price_cents: 100, market_price_cents: 1, status: 'cancelled', fill_notional_cents: 3n, fcfa_rate: cedi },
  ];
  assert.equal(sumCommitted(orders), 167n + 180n + 700n + 167n);
});

test('exactly at the cap is allowed, one cent over is refused', () => {
  const cap = 10_000_000n;
  assert.deepEqual(checkCap('KYC1', 0n, cap), { ok: true });
  assert.deepEqual(checkCap('KYC1', cap - 1n, 1n), { ok: true });
  assert.deepEqual(checkCap('KYC1', 0n, cap + 1n), { ok: false, remaining_cents: cap, cap_cents: cap });
  assert.deepEqual(checkCap('KYC1', cap, 1n), { ok: false, remaining_cents: 0n, cap_cents: cap });
  assert.deepEqual(checkCap('KYC1', 4_000_000n, 6_000_001n), { ok: false, remaining_cents: 6_000_000n, cap_cents: cap });
  assert.deepEqual(checkCap('KYC2', 499_999_999n, 1n), { ok: true });
  assert.deepEqual(checkCap('KYC2', 499_999_999n, 2n), { ok: false, remaining_cents: 1n, cap_cents: 500_000_000n });
  assert.deepEqual(checkCap('KYC3', 10n ** 30n, 10n ** 21n), { ok: true }, 'unlimited');
});

test('sells never count, even over the cap', () => {
  const sell = orderNotionalCents({ side: 'sell', qty: 1_000_000, limit_price_cents: 1_000_000, market_price_cents: 1 });
  assert.deepEqual(checkCap('KYC1', 0n, sell), { ok: true });
  assert.deepEqual(checkCap('KYC1', 50_000_000n, sell), { ok: true }, 'already over the cap (level changed)');
});

test('remaining allowance never goes negative', () => {
  assert.equal(remainingAllowance('KYC1', 0n), 10_000_000n);
  assert.equal(remainingAllowance('KYC1', 9_999_999n), 1n);
  assert.equal(remainingAllowance('KYC1', 10_000_000n), 0n);
  assert.equal(remainingAllowance('KYC1', 10_000_001n), 0n);
  assert.equal(remainingAllowance('KYC2', 100n), 499_999_900n);
  assert.equal(remainingAllowance('KYC3', 10n ** 25n), null);
});

test('month window: calendar month in UTC, half-open', () => {
  assert.deepEqual(monthWindow(new Date('2026-11-22T10:00:00.000Z')), {
    startMs: Date.parse('2026-11-01T00:00:00.000Z'),
    endMs: Date.parse('2026-12-01T00:00:00.000Z'),
  });
  // First and last millisecond of a month.
  assert.deepEqual(monthWindow(new Date('2026-11-01T00:00:00.000Z')), monthWindow(new Date('2026-11-30T23:59:59.999Z')));
  assert.equal(monthWindow(new Date('2026-12-01T00:00:00.000Z')).startMs, Date.parse('2026-12-01T00:00:00.000Z'));
  // Year end, leap February.
  assert.deepEqual(monthWindow(new Date('2026-12-31T23:59:59.999Z')), {
    startMs: Date.parse('2026-12-01T00:00:00.000Z'),
    endMs: Date.parse('2027-01-01T00:00:00.000Z'),
  });
  const feb = monthWindow(new Date('2028-02-29T12:00:00Z'));
  assert.equal(feb.endMs - feb.startMs, 29 * 86_400_000);
  // UTC, not local: 23:30 on the 31st at UTC-1 is already next month in UTC.
  assert.equal(monthWindow(new Date('2026-10-31T23:30:00-01:00')).startMs, Date.parse('2026-11-01T00:00:00.000Z'));
  assert.throws(() => monthWindow(new Date('nope')), RangeError);
});

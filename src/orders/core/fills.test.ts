import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FillError, applyFill, applyFills, averageFillPrice, averageFillPriceOf, initialFillState, type FillState } from './fills.js';
import { IllegalTransitionError } from './state-machine.js';

const routed = (qty: number): FillState => initialFillState(qty, 'routed');
const isFillError = (code: string) => (err: unknown) => err instanceof FillError && err.code === code;

test('a partial fill then the rest: statuses, filled_qty and exact notional', () => {
  const s0 = routed(100);
  const s1 = applyFill(s0, { fill_qty: 40, fill_price_cents: 1_550_000 });
  assert.deepEqual(s1, { qty: 100, filled_qty: 40, fill_notional_cents: 62_000_000n, status: 'partially_filled' });
  assert.deepEqual(s0, routed(100), 'input not modified');
  const s2 = applyFill(s1, { fill_qty: 35, fill_price_cents: 1_551_000 });
  assert.equal(s2.status, 'partially_filled');
  const s3 = applyFill(s2, { fill_qty: 25, fill_price_cents: 1_549_000 });
  assert.deepEqual(s3, { qty: 100, filled_qty: 100, fill_notional_cents: 62_000_000n + 54_285_000n + 38_725_000n, status: 'filled' });
  assert.equal(averageFillPriceOf(s3), 1_550_100);
});

test('a single fill of the whole quantity goes routed -> filled', () => {
  const s = applyFill(routed(7), { fill_qty: 7, fill_price_cents: 3 });
  assert.equal(s.status, 'filled');
  assert.equal(averageFillPriceOf(s), 3);
});

test('a fill above qty is refused with fill_exceeds_qty, also by one share', () => {
  const s = applyFill(routed(10), { fill_qty: 9, fill_price_cents: 100 });
  assert.throws(() => applyFill(s, { fill_qty: 2, fill_price_cents: 100 }), isFillError('fill_exceeds_qty'));
  assert.throws(() => applyFill(routed(10), { fill_qty: 11, fill_price_cents: 100 }), isFillError('fill_exceeds_qty'));
});

test('invalid fills are refused', () => {
  for (const fill of [
    { fill_qty: 0, fill_price_cents: 100 },
    { fill_qty: -1, fill_price_cents: 100 },
    { fill_qty: 1.5, fill_price_cents: 100 },
    { fill_qty: 1, fill_price_cents: 0 },
    { fill_qty: 1, fill_price_cents: 99.5 },
    { fill_qty: 1, fill_price_cents: Number.NaN },
    { fill_qty: 2 ** 53, fill_price_cents: 1 },
  ]) {
    assert.throws(() => applyFill(routed(10), fill), isFillError('invalid_fill'), JSON.stringify(fill));
  }
});

test('a corrupt state is refused, never repaired', () => {
  for (const state of [
    { qty: 10, filled_qty: 11, fill_notional_cents: 1100n, status: 'partially_filled' },
    { qty: 10, filled_qty: -1, fill_notional_cents: 0n, status: 'routed' },
    { qty: 10, filled_qty: 2, fill_notional_cents: 0n, status: 'partially_filled' },
    { qty: 10, filled_qty: 0, fill_notional_cents: 5n, status: 'routed' },
    { qty: 0, filled_qty: 0, fill_notional_cents: 0n, status: 'routed' },
  ] as FillState[]) {
    assert.throws(
      () => applyFill(state, { fill_qty: 1, fill_price_cents: 1 }),
      isFillError('invalid_fill_state'),
      JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? `${v}` : v)),
    );
  }
});

test('only routed and partially_filled orders take fills', () => {
  for (const status of ['created', 'filled', 'failed', 'cancelled'] as const) {
    const state: FillState =
      status === 'filled' ? { qty: 5, filled_qty: 5, fill_notional_cents: 50n, status } : initialFillState(5, status);
    const fill = { fill_qty: status === 'filled' ? 1 : 5, fill_price_cents: 10 };
    assert.throws(
      () => applyFill(state, fill),
      (err: unknown) => err instanceof IllegalTransitionError || (err instanceof FillError && err.code === 'fill_exceeds_qty'),
      status,
    );
  }
  assert.throws(() => applyFill(initialFillState(5), { fill_qty: 1, fill_price_cents: 10 }), IllegalTransitionError);
  assert.throws(() => applyFill(initialFillState(5, 'cancelled'), { fill_qty: 1, fill_price_cents: 10 }), IllegalTransitionError);
});

test('filled_qty never decreases over any sequence of fills', () => {
  let s = routed(1000);
  let last = 0;
  for (let i = 1; s.filled_qty < 1000; i++) {
    s = applyFill(s, { fill_qty: Math.min(i, 1000 - s.filled_qty), fill_price_cents: 100 + i });
    assert.ok(s.filled_qty > last);
    last = s.filled_qty;
  }
  assert.equal(s.status, 'filled');
});

test('average rounds half up, exactly at .5', () => {
  assert.equal(averageFillPrice(0n, 0), null);
  assert.equal(averageFillPrice(5n, 2), 3, '2.5 -> 3');
  assert.equal(averageFillPrice(3n, 2), 2, '1.5 -> 2');
  assert.equal(averageFillPrice(7n, 2), 4, '3.5 -> 4');
  assert.equal(averageFillPrice(10n, 4), 3, '2.5 -> 3');
  assert.equal(averageFillPrice(4n, 3), 1, '1.333 -> 1');
  assert.equal(averageFillPrice(5n, 3), 2, '1.667 -> 2');
  assert.equal(averageFillPrice(6n, 3), 2, 'exact');
  assert.equal(averageFillPrice(1n, 2), 1, '0.5 -> 1');
  assert.equal(averageFillPrice(1n, 3), 0, '0.333 -> 0');
  // Two fills: 1 @ 100 and 1 @ 101 -> 100.5 -> 101.
  const s = applyFills(routed(2), [
    { fill_qty: 1, fill_price_cents: 100 },
    { fill_qty: 1, fill_price_cents: 101 },
  ]);
  assert.equal(averageFillPriceOf(s), 101);
  // Just under and just over .5 with a large denominator.
  const q = 999_999_999;
  assert.equal(averageFillPrice(BigInt(q) * 1000n + BigInt((q - 1) / 2), q), 1000, '1000.4999999995 -> 1000');
  assert.equal(averageFillPrice(BigInt(q) * 1000n + BigInt((q + 1) / 2), q), 1001, '1000.5000000005 -> 1001');
});

test('huge notionals beyond 2^53 stay exact', () => {
  // qty 1e9 at 1e12 cents: notional 1e21.
  const s = applyFill(routed(1_000_000_000), { fill_qty: 1_000_000_000, fill_price_cents: 1_000_000_000_000 });
  assert.equal(s.fill_notional_cents, 10n ** 21n);
  assert.equal(averageFillPriceOf(s), 1_000_000_000_000);
  // Half the shares one cent above: average 1e12 + 0.5 -> rounds up to 1e12 + 1; a float would lose the .5.
  const t = applyFills(routed(1_000_000_000), [
    { fill_qty: 500_000_000, fill_price_cents: 999_999_999_999 },
    { fill_qty: 500_000_000, fill_price_cents: 1_000_000_000_000 },
  ]);
  assert.equal(t.fill_notional_cents, 999_999_999_999_500_000_000n);
  assert.equal(averageFillPriceOf(t), 1_000_000_000_000);
  const u = applyFills(routed(1_000_000_000), [
    { fill_qty: 499_999_999, fill_price_cents: 999_999_999_999 },
    { fill_qty: 500_000_001, fill_price_cents: 1_000_000_000_000 },
  ]);
  assert.equal(averageFillPriceOf(u), 1_000_000_000_000, '999999999999.500000001 -> up');
  const v = applyFills(routed(1_000_000_000), [
    { fill_qty: 500_000_001, fill_price_cents: 999_999_999_999 },
    { fill_qty: 499_999_999, fill_price_cents: 1_000_000_000_000 },
  ]);
  assert.equal(averageFillPriceOf(v), 999_999_999_999, '999999999999.499999999 -> down');
  assert.equal(Math.round(Number(v.fill_notional_cents) / 1e9), 1_000_000_000_000, 'the float computation gets this one wrong');
});

test('averageFillPrice refuses impossible inputs', () => {
  assert.throws(() => averageFillPrice(-1n, 1), RangeError);
  assert.throws(() => averageFillPrice(1n, -1), RangeError);
  assert.throws(() => averageFillPrice(1n, 1.5), RangeError);
  assert.throws(() => averageFillPrice(5n, 0), RangeError);
});

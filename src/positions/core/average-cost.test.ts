import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTrade, applyTrades, averageCostCents, declared, FLAT, valuation, type PositionAmounts, type Trade } from './average-cost.js';

const buy = (qty: number, price_cents: number): Trade => ({ side: 'buy', qty, price_cents });
const sell = (qty: number, price_cents: number): Trade => ({ side: 'sell', qty, price_cents });

test('the worked example of docs/positions.md: two buys, a sell at the unchanged average, valued at the reference price', () => {
  const first = applyTrade(FLAT, buy(100, 1_500_000));
  assert.deepEqual(first, { qty: 100n, cost_cents: 150_000_000n, realised_pnl_cents: 0n });
  const second = applyTrade(first, buy(50, 1_560_000));
  assert.deepEqual(second, { qty: 150n, cost_cents: 228_000_000n, realised_pnl_cents: 0n });
  assert.equal(averageCostCents(second), 1_520_000n, '(100 x 15,000.00 + 50 x 15,600.00) / 150 = 15,200.00');
  const third = applyTrade(second, sell(60, 1_600_000));
  assert.deepEqual(
    third,
    { qty: 90n, cost_cents: 136_800_000n, realised_pnl_cents: 4_800_000n },
    '(16,000.00 - 15,200.00) x 60 = 48,000.00',
  );
  assert.equal(averageCostCents(third), 1_520_000n, 'a sell leaves the average unchanged');
  assert.deepEqual(valuation(third, 1_550_000), { market_value_cents: 139_500_000n, unrealised_pnl_cents: 2_700_000n });
  assert.deepEqual(first, { qty: 100n, cost_cents: 150_000_000n, realised_pnl_cents: 0n }, 'inputs are not modified');
});

test('a close rounds its share of the cost half up once; cost left and profit realised add up to exactly what was paid and received', () => {
  const p = applyTrades(FLAT, [buy(1, 100), buy(1, 100), buy(1, 101)]);
  assert.deepEqual(p, { qty: 3n, cost_cents: 301n, realised_pnl_cents: 0n });
  assert.equal(averageCostCents(p), 100n, '100.33 rounds to 100');
  const one = applyTrade(p, sell(1, 150));
  // 301 / 3 = 100.33: the share sold takes 100 of the cost.
  assert.deepEqual(one, { qty: 2n, cost_cents: 201n, realised_pnl_cents: 50n });
  assert.equal(averageCostCents(one), 101n, '100.5 rounds half up');
  const all = applyTrade(one, sell(2, 150));
  assert.deepEqual(all, { qty: 0n, cost_cents: 0n, realised_pnl_cents: 3n * 150n - 301n });
  assert.equal(averageCostCents(all), null, 'flat: no average');
  assert.deepEqual(valuation(all, 999), { market_value_cents: 0n, unrealised_pnl_cents: 0n });
});

test('selling more than held: the rest opens a short position at the sale price, which a buy then covers', () => {
  const long = applyTrade(FLAT, buy(10, 1_000));
  const short = applyTrade(long, sell(15, 1_200));
  assert.deepEqual(short, { qty: -5n, cost_cents: -6_000n, realised_pnl_cents: 2_000n });
  assert.equal(averageCostCents(short), 1_200n, 'the average sale price of the shares sold short');
  assert.deepEqual(
    valuation(short, 1_100),
    { market_value_cents: -5_500n, unrealised_pnl_cents: 500n },
    'sold at 12.00, worth 11.00: a gain',
  );
  const covered = applyTrade(short, buy(3, 1_100));
  assert.deepEqual(covered, { qty: -2n, cost_cents: -2_400n, realised_pnl_cents: 2_000n + 300n }, '(12.00 - 11.00) x 3');
  const flipped = applyTrade(covered, buy(4, 1_300));
  assert.deepEqual(
    flipped,
    { qty: 2n, cost_cents: 2_600n, realised_pnl_cents: 2_300n - 200n },
    'covers 2 at a loss of 1.00 each, then holds 2 at 13.00',
  );
});

test('a statement line is the starting position; amounts beyond 2^63 stay exact', () => {
  assert.deepEqual(declared(40, 1_480_000), { qty: 40n, cost_cents: 59_200_000n, realised_pnl_cents: 0n });
  assert.deepEqual(declared(0, 0), FLAT);
  const big: PositionAmounts = applyTrades(
    FLAT,
    Array.from({ length: 20 }, () => buy(1_000_000_000, 1_000_000_000_000)),
  );
  assert.equal(big.cost_cents, 20n * 10n ** 21n);
  const half = applyTrade(big, sell(10_000_000_000, 1_000_000_000_000));
  assert.deepEqual(half, { qty: 10_000_000_000n, cost_cents: 10n ** 22n, realised_pnl_cents: 0n });
});

test('a trade that is not a positive quantity at a price of 0 or more is refused', () => {
  for (const t of [buy(0, 1), buy(-1, 1), buy(1.5, 1), sell(1, -1), buy(1, Number.NaN)])
    assert.throws(() => applyTrade(FLAT, t), RangeError);
  assert.deepEqual(applyTrade(FLAT, buy(1, 0)), { qty: 1n, cost_cents: 0n, realised_pnl_cents: 0n }, 'a free share (0 cents) is a trade');
});

test('the statement example of docs/positions.md: a declared line, then a buy and a sell on top', () => {
  const bought = applyTrade(declared(100, 1_500_000), buy(10, 1_552_000));
  assert.deepEqual(bought, { qty: 110n, cost_cents: 165_520_000n, realised_pnl_cents: 0n });
  assert.equal(averageCostCents(bought), 1_504_727n);
  const sold = applyTrade(bought, sell(30, 1_560_000));
  assert.deepEqual(sold, { qty: 80n, cost_cents: 165_520_000n - 45_141_818n, realised_pnl_cents: 1_658_182n });
  assert.equal(averageCostCents(sold), 1_504_727n);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTradingRules, insideBand, marketWorstPriceCents, priceLimits, type TradingRules } from './price-rules.js';

// A BRVM equity at 25,500 XOF with a 5 XOF tick and the +-7.5 % band: 23,587.5 and 27,412.5 XOF are
// off the grid, so the prices an order may take run from 23,590 to 27,410 XOF.
const SNTS: TradingRules = { reference_price_cents: 2_550_000, tick_size_cents: 500, lot_size: 1, price_band_bps: 750 };
const rulesOf = (order: { qty: number; limit_price_cents?: number | null }, rules: TradingRules = SNTS) =>
  checkTradingRules(rules, order).map((d) => `${d.field} ${d.rule}`);

test('band limits round inwards to the tick grid', () => {
  assert.deepEqual(priceLimits(SNTS), { low_cents: 2_359_000, high_cents: 2_741_000 });
  // When the band falls on the grid, its limits are exactly +-bps.
  assert.deepEqual(priceLimits({ reference_price_cents: 1_000_000, tick_size_cents: 100, price_band_bps: 750 }), {
    low_cents: 925_000,
    high_cents: 1_075_000,
  });
  // A one-cent tick: 7.5 % of 1,550,001 cents is 116,250.075; low rounds up, high rounds down.
  assert.deepEqual(priceLimits({ reference_price_cents: 1_550_001, tick_size_cents: 1, price_band_bps: 750 }), {
    low_cents: 1_433_751,
    high_cents: 1_666_251,
  });
  // A 100 % band would reach zero: the low limit is one tick.
  assert.deepEqual(priceLimits({ reference_price_cents: 500, tick_size_cents: 5, price_band_bps: 10_000 }), {
    low_cents: 5,
    high_cents: 1_000,
  });
  // Beyond 2^53 in the intermediate product, still exact.
  assert.deepEqual(priceLimits({ reference_price_cents: 1_000_000_000_000, tick_size_cents: 1, price_band_bps: 9_999 }), {
    low_cents: 100_000_000,
    high_cents: 1_999_900_000_000,
  });
  assert.equal(priceLimits({ ...SNTS, price_band_bps: null }), null);
});

test('a limit exactly at either band limit passes; one tick past fails with price_band', () => {
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_741_000 }), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_741_500 }), ['limit_price_cents price_band']);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_359_000 }), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_358_500 }), ['limit_price_cents price_band']);
  const [detail] = checkTradingRules(SNTS, { qty: 1, limit_price_cents: 2_741_500 });
  assert.equal(detail?.value, 2_741_500);
  assert.equal(detail?.low_cents, 2_359_000);
  assert.equal(detail?.high_cents, 2_741_000);
});

test('a limit off the tick grid fails with tick_size; both rules are reported when both apply', () => {
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_550_000 }), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_550_001 }), ['limit_price_cents tick_size']);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_550_499 }), ['limit_price_cents tick_size']);
  // Beyond the band's exact bounds (23,587.5 and 27,412.5 XOF) and off the grid: both.
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_741_251 }), ['limit_price_cents tick_size', 'limit_price_cents price_band']);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_358_749 }), ['limit_price_cents tick_size', 'limit_price_cents price_band']);
});

test('the band is checked at its exact bounds: a price off the grid inside them breaks only the tick', () => {
  // Between the last price on the grid (27,410 XOF) and the exact bound (27,412.5 XOF), the bound
  // itself included; likewise at the bottom.
  for (const price of [2_741_200, 2_741_001, 2_741_250, 2_358_750, 2_358_999])
    assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: price }), ['limit_price_cents tick_size'], `${price}`);
  assert.equal(insideBand(SNTS, 2_741_250), true);
  assert.equal(insideBand(SNTS, 2_741_251), false);
  assert.equal(insideBand(SNTS, 2_358_750), true);
  assert.equal(insideBand(SNTS, 2_358_749), false);
  assert.equal(insideBand({ ...SNTS, price_band_bps: null }, 1), true);
  // A one-cent tick: 7.5 % of 1,550,001 cents is 116,250.075, so the bounds are 1,433,750.925 and
  // 1,666,251.075 cents: integers compared exactly, with no rounding of the bounds.
  const cent = { ...SNTS, reference_price_cents: 1_550_001, tick_size_cents: 1 };
  assert.deepEqual(
    [1_433_750, 1_433_751, 1_666_251, 1_666_252].map((p) => insideBand(cent, p)),
    [false, true, true, false],
  );
  // Beyond 2^53 in the products, still exact: 10^12 cents with 9,999 basis points.
  const huge = { reference_price_cents: 1_000_000_000_000, price_band_bps: 9_999 };
  assert.deepEqual(
    [99_999_999, 100_000_000, 1_999_900_000_000, 1_999_900_000_001].map((p) => insideBand(huge, p)),
    [false, true, true, false],
  );
  // The detail's members are the prices an order may take; its message gives the exact bounds too.
  const [detail] = checkTradingRules(SNTS, { qty: 1, limit_price_cents: 2_741_500 });
  assert.deepEqual([detail?.low_cents, detail?.high_cents], [2_359_000, 2_741_000]);
  assert.match(
    String(detail?.message),
    /from 2358750 to 2741250 cents; on the tick grid, from 2359000 \(low_cents\) to 2741000 \(high_cents\)/,
  );
  const [fraction] = checkTradingRules(cent, { qty: 1, limit_price_cents: 1_433_750 });
  assert.match(String(fraction?.message), /from 1433750\.925 to 1666251\.075 cents/);
});

test('qty must be a whole number of lots', () => {
  const lots = { ...SNTS, lot_size: 10 };
  assert.deepEqual(rulesOf({ qty: 10 }, lots), []);
  assert.deepEqual(rulesOf({ qty: 20, limit_price_cents: 2_550_000 }, lots), []);
  assert.deepEqual(rulesOf({ qty: 11 }, lots), ['qty lot_size']);
  assert.deepEqual(rulesOf({ qty: 9 }, lots), ['qty lot_size']);
  assert.deepEqual(rulesOf({ qty: 15, limit_price_cents: 2_741_500 }, lots), ['qty lot_size', 'limit_price_cents price_band']);
});

test('without a band any price on the grid passes; a market order has no price to check', () => {
  const unbanded = { ...SNTS, tick_size_cents: 1, price_band_bps: null };
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 1 }, unbanded), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 1_000_000_000_000 }, unbanded), []);
  assert.deepEqual(rulesOf({ qty: 1 }), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: null }), []);
});

test('a market order is worth its band upper limit; unknown without a band', () => {
  assert.equal(marketWorstPriceCents(SNTS), 2_741_000);
  assert.equal(marketWorstPriceCents({ ...SNTS, price_band_bps: null }), null);
  // The worst case is the highest limit an order may take: it passes, and one tick more does not.
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_741_000 }), []);
  assert.deepEqual(rulesOf({ qty: 1, limit_price_cents: 2_741_000 + 500 }), ['limit_price_cents price_band']);
});

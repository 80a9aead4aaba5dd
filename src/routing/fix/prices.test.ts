import { test } from 'node:test';
import assert from 'node:assert/strict';
import { centsToPrice, parseQty, priceToCents } from './prices.js';

test('cents become an exact decimal price in currency units', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [7, '0.07'],
    [29, '0.29'],
    [100, '1'],
    [150, '1.5'],
    [1500050, '15000.5'],
    [1500001, '15000.01'],
    [123456789012, '1234567890.12'],
  ];
  for (const [cents, price] of cases) assert.equal(centsToPrice(cents), price, `${cents}`);
  assert.throws(() => centsToPrice(-1), RangeError);
  assert.throws(() => centsToPrice(1.5), RangeError);
});

test('a decimal price becomes cents without binary rounding; a fraction of a cent is rounded half up and flagged', () => {
  assert.deepEqual(priceToCents('0.29'), { cents: 29, exact: true });
  assert.deepEqual(priceToCents('15000.5'), { cents: 1500050, exact: true });
  assert.deepEqual(priceToCents('15000'), { cents: 1500000, exact: true });
  assert.deepEqual(priceToCents('15000.500000'), { cents: 1500050, exact: true });
  assert.deepEqual(priceToCents('1.005'), { cents: 101, exact: false });
  assert.deepEqual(priceToCents('1.0049'), { cents: 100, exact: false });
  assert.deepEqual(priceToCents('2.'), { cents: 200, exact: true });
  for (const bad of ['', 'abc', '-1', '1e3', '1,5']) assert.equal(priceToCents(bad), null, bad);
  for (const cents of [1, 29, 101, 999999, 1500050]) assert.equal(priceToCents(centsToPrice(cents))?.cents, cents);
});

test('quantities are whole numbers', () => {
  assert.equal(parseQty('10'), 10);
  assert.equal(parseQty('10.000'), 10);
  assert.equal(parseQty('10.5'), null);
  assert.equal(parseQty(null), null);
});

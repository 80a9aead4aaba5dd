import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDecimalRate } from './decimal-rate.js';

test('decimal rates read as exact fractions', () => {
  assert.deepEqual(parseDecimalRate('55.4012'), { num: 554012n, den: 10000n });
  assert.deepEqual(parseDecimalRate('50'), { num: 50n, den: 1n });
  assert.deepEqual(parseDecimalRate('0.1'), { num: 1n, den: 10n }, 'not 0.1000000000000000055511151231257827 as a float');
  assert.deepEqual(parseDecimalRate('123456789.0123456789'), { num: 1234567890123456789n, den: 10n ** 10n });
});

test('malformed or non-positive rates are refused', () => {
  for (const bad of ['', '0', '0.0', '-1', '+1', '1e3', '1.', '.5', '01.5', '1,5', ' 1', '1.12345678901', '1234567890', 'NaN']) {
    assert.equal(parseDecimalRate(bad), null, JSON.stringify(bad));
  }
});

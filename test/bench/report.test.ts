import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ratioText } from '../../bench/report.js';

test('a ratio written against its goal takes the decimals that make the figure agree with the verdict', () => {
  // Without a goal, whole percentages and multiples to two decimals.
  assert.equal(ratioText(0.8956), '90 %');
  assert.equal(ratioText(2.1734), '2.17×');
  // A goal of 90 % missed by a hair is not written as 90 %; met, it is.
  assert.equal(ratioText(0.8956, 0.9), '89.6 %');
  assert.equal(ratioText(0.89996, 0.9), '89.996 %');
  assert.equal(ratioText(0.9004, 0.9), '90 %');
  assert.equal(ratioText(0.74, 0.7), '74 %');
  // Rounded up to the goal at two decimals of a multiple, written with a third.
  assert.equal(ratioText(1.9996, 2), '1.9996×');
  assert.equal(ratioText(1.996, 2), '1.996×');
  assert.equal(ratioText(2.2, 2), '2.20×');
});

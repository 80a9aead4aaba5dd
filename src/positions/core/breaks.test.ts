import { test } from 'node:test';
import assert from 'node:assert/strict';
import { breaksOf } from './breaks.js';
import { holdingsShortfall } from './holdings.js';

test('a break for each instrument where the statement and the records differ, listed by instrument', () => {
  const statement = new Map([
    ['SNTS.BRVM', 100],
    ['ORAC.BRVM', 40],
    ['ZERO.BRVM', 0],
  ]);
  const expected = new Map([
    ['SNTS.BRVM', 120],
    ['ORAC.BRVM', 40],
    ['KOLA.BRVM', 7],
  ]);
  assert.deepEqual(breaksOf(statement, expected), [
    { instrument: 'KOLA.BRVM', statement_qty: 0, expected_qty: 7, difference_qty: -7 },
    { instrument: 'SNTS.BRVM', statement_qty: 100, expected_qty: 120, difference_qty: -20 },
  ]);
  assert.deepEqual(breaksOf(new Map([['A.BRVM', 5]]), new Map([['A.BRVM', 5]])), []);
  assert.deepEqual(breaksOf(new Map([['A.BRVM', 5]]), new Map()), [
    { instrument: 'A.BRVM', statement_qty: 5, expected_qty: 0, difference_qty: 5 },
  ]);
});

test('the holdings check: what the position holds less the other open sells', () => {
  const base = { qty: 60, needed: 60, instrument: 'KOLA.BRVM' };
  assert.equal(holdingsShortfall({ ...base, held: 100n, pendingSells: 40n }), null, 'exactly what is available');
  assert.deepEqual(holdingsShortfall({ ...base, held: 100n, pendingSells: 41n }), {
    field: 'qty',
    rule: 'holdings',
    value: 60,
    message: 'the sell needs 60 KOLA.BRVM; 59 available (100 in the position, 41 on other open sells)',
    available_qty: 59,
    position_qty: 100,
    pending_sell_qty: 41,
  });
  assert.equal(holdingsShortfall({ ...base, held: -5n, pendingSells: 0n })?.available_qty, 0, 'never shown below 0');
  assert.equal(
    holdingsShortfall({ qty: 80, needed: 50, instrument: 'KOLA.BRVM', held: 50n, pendingSells: 0n }),
    null,
    'an amend needs its rest only',
  );
});

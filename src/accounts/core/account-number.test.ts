import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidAccountNumber } from './account-number.js';

test('an account number is 1 to 32 printable ASCII characters without | or =, no space at either end', () => {
  for (const ok of ['1', 'CI-0042-7781', 'CI 0042 7781', 'A'.repeat(32), '!"#$%&\'()*+,-./:;<>?@[\\]^_`{}~', 'a  b'])
    assert.equal(isValidAccountNumber(ok), true, ok);
  for (const bad of ['', 'A'.repeat(33), ' A', 'A ', ' ', 'A|B', 'A=B', 'A\u0001B', 'A\tB', 'A\nB', 'A\u007fB', 'Aé', 'A\u00a0B'])
    assert.equal(isValidAccountNumber(bad), false, JSON.stringify(bad));
});

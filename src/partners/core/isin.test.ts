import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidIsin, isinCheckDigit } from './isin.js';

test('ISIN check digits: published identifiers pass', () => {
  // Well-known ISINs from ISO 6166's examples and large issuers.
  for (const isin of ['US0378331005', 'US5949181045', 'GB0002634946', 'DE000BAY0017', 'FR0000131104', 'SN0000000019', 'CI0000000030']) {
    assert.ok(isValidIsin(isin), isin);
  }
  assert.equal(isinCheckDigit('US037833100'), 5);
});

test('ISIN check digits: one changed character, a swap or a bad shape fails', () => {
  assert.equal(isValidIsin('US0378331006'), false, 'wrong check digit');
  assert.equal(isValidIsin('US0378331015'), false, 'one digit changed');
  assert.equal(isValidIsin('SN0000000109'), false, 'neighbours swapped');
  assert.equal(isValidIsin('sn0000000019'), false, 'lower case');
  assert.equal(isValidIsin('SN000000019'), false, 'too short');
  assert.equal(isValidIsin('1N0000000019'), false, 'country must be letters');
});

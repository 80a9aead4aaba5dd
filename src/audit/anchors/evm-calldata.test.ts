import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ANCHOR_CALLDATA_BYTES, anchorCalldata, parseAnchorCalldata } from './evm-calldata.js';

const ROOT = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex'); // 00 01 .. 1f

test('anchor calldata is tag "cau1", the 32 root bytes, then the ASCII date (the documented vector)', () => {
  const data = anchorCalldata('2026-11-22', ROOT);
  assert.equal(data, '0x63617531' + '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f' + '323032362d31312d3232');
  assert.equal((data.length - 2) / 2, ANCHOR_CALLDATA_BYTES);
  assert.equal(Buffer.from(data.slice(2), 'hex').subarray(0, 4).toString('ascii'), 'cau1');
  assert.equal(Buffer.from(data.slice(2), 'hex').subarray(36).toString('ascii'), '2026-11-22');
});

test('parseAnchorCalldata reads back what anchorCalldata wrote, in either hex case', () => {
  const data = anchorCalldata('2027-01-31', ROOT);
  assert.deepEqual(parseAnchorCalldata(data), { date: '2027-01-31', merkleRoot: ROOT });
  assert.deepEqual(parseAnchorCalldata(`0x${data.slice(2).toUpperCase()}`), { date: '2027-01-31', merkleRoot: ROOT });
});

test('parseAnchorCalldata returns null for data that is not a version-1 anchor', () => {
  const data = anchorCalldata('2026-11-22', ROOT);
  const dateHex = (date: string) => Buffer.from(date, 'latin1').toString('hex');
  for (const other of [
    '0x',
    data.slice(2), // no 0x prefix
    data.slice(0, -2), // one byte short
    `${data}00`, // one byte long
    `0x63617532${data.slice(10)}`, // "cau2"
    `0xa9059cbb${data.slice(10)}`, // an ERC-20 transfer selector
    `${data.slice(0, 74)}${dateHex('2026-02-30')}`, // not a calendar day
    `${data.slice(0, 74)}${dateHex('2026/11/22')}`,
    `${data.slice(0, -2)}zz`,
  ]) {
    assert.equal(parseAnchorCalldata(other), null, other);
  }
});

test('anchorCalldata rejects a malformed date or root with TypeError', () => {
  assert.throws(() => anchorCalldata('2026-13-01', ROOT), TypeError);
  assert.throws(() => anchorCalldata('2026-11-22', ROOT.slice(1)), TypeError);
  assert.throws(() => anchorCalldata('2026-11-22', `0x${ROOT}`), TypeError);
});

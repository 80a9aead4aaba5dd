import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditLeafHash, encodeAuditLeaf } from '@cauri/verifier';
import { newId } from '../../lib/ids.js';
import { encodeOrderLeaf, leafHashOfText, orderLeaf, type LeafSource } from './leaf.js';

const base: LeafSource = {
  id: newId('order', Date.parse('2026-11-22T10:00:00.123Z')),
  rcpt_to: 'sgi_01jd5yq0m0000000000000baob',
  kyc_attestation_id: newId('attestation'),
  kyc_attestation_sha256: 'ab'.repeat(32),
  instrument: 'KOLA.BRVM',
  side: 'buy',
  qty: 10,
  limit_price_cents: 1_500_000,
  created_at: Date.parse('2026-11-22T10:00:00.123Z'),
};

test('the fast leaf encoding is exactly encodeAuditLeaf, and its hash auditLeafHash', () => {
  const times = [
    0,
    1,
    999,
    1000,
    59_999,
    3_599_999,
    86_399_999,
    86_400_000,
    Date.parse('2026-11-22T23:59:59.999Z'),
    Date.parse('2000-02-29T12:34:56.789Z'),
    Date.parse('1969-12-31T23:59:59.999Z'),
  ];
  const variants: Partial<LeafSource>[] = [
    {},
    { limit_price_cents: null },
    { side: 'sell' },
    { qty: 1_000_000_000 },
    { limit_price_cents: 1_000_000_000_000 },
    { instrument: 'a"b' },
    { rcpt_to: 'back\\slash' },
    { instrument: 'é€😀' },
    { id: 'tab\there' },
    { qty: 2 ** 53 },
    { instrument: '' },
  ];
  // Alternate the days to exercise the cached day prefix going back and forth.
  for (const created_at of [...times, ...times.reverse()]) {
    for (const v of variants) {
      const row = { ...base, ...v, created_at };
      let expected: string;
      try {
        expected = encodeAuditLeaf(orderLeaf(row));
      } catch {
        continue;
      }
      const text = encodeOrderLeaf(row);
      assert.equal(text, expected, JSON.stringify(row));
      assert.deepEqual(leafHashOfText(text), Buffer.from(auditLeafHash(orderLeaf(row))));
    }
  }
});

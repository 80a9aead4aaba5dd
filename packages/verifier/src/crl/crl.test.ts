import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyAttestation } from '../attestation/verify.js';
import { verifyCrl } from './verify.js';
import { mergeCrl } from './merge.js';
import { keyDocument, signDocument } from '../testing/issuer.js';
import { att, body, crl, doc, expectReason, k1, k2, now } from '../testing/attestation-fixtures.js';

test('a client syncing with ?since=N rebuilds the full list exactly, and revocation follows', () => {
  const e = (n: number, reason = 'other') => ({
    attestation_id: `att_${String(n).padStart(26, '0')}`,
    revoked_at: `2026-03-2${n}T00:00:00Z`,
    reason,
  });
  const target = { attestation_id: body.id, revoked_at: '2026-03-31T12:00:00Z', reason: 'subject_request' };
  const full3 = verifyCrl(crl({ crl_number: 3, issued_at: '2026-03-25T00:00:00Z', entries: [e(1), e(2), e(3)] }), doc);
  const full5 = crl({ crl_number: 5, issued_at: '2026-03-31T23:30:00Z', entries: [e(1), e(2), e(3), e(4), target] });
  const delta = verifyCrl(crl({ crl_number: 5, base_crl_number: 3, issued_at: '2026-03-31T23:30:00Z', entries: [e(4), target] }), doc);
  assert.ok(full3.valid && delta.valid);
  const merged = mergeCrl(full3.crl, delta.crl);
  assert.ok(merged.valid, merged.valid ? '' : merged.message);
  assert.deepEqual(merged.crl.entries, full5.entries);
  assert.equal(merged.crl.crl_number, 5);
  assert.equal(merged.crl.base_crl_number, null);
  assert.equal(merged.crl.issued_at, full5.issued_at);
  assert.equal(merged.crl.next_update, full5.next_update);
  assert.equal(merged.crl.signed, false);
  assert.ok(Object.isFrozen(merged.crl) && Object.isFrozen(merged.crl.entries));
  // The old full list does not know of the revocation (and is stale); the merged view does.
  expectReason(verifyAttestation(att, doc, { now, crl: full3.crl }), 'crl_stale', 'old list');
  expectReason(verifyAttestation(att, doc, { now, crl: merged.crl }), 'revoked', 'merged view');
  // Merged views chain: a later delta applies to the merged view.
  const delta2 = verifyCrl(crl({ crl_number: 6, base_crl_number: 5, issued_at: '2026-03-31T23:45:00Z', entries: [e(6)] }), doc);
  assert.ok(delta2.valid);
  const merged2 = mergeCrl(merged.crl, delta2.crl);
  assert.ok(merged2.valid);
  assert.deepEqual(
    merged2.crl.entries.map((x) => x.attestation_id),
    [...full5.entries, e(6)].map((x) => x.attestation_id),
  );
  // A delta from an older base repeats entries; the union is unchanged.
  const wide = verifyCrl(
    crl({ crl_number: 5, base_crl_number: 1, issued_at: '2026-03-31T23:30:00Z', entries: [e(2), e(3), e(4), target] }),
    doc,
  );
  assert.ok(wide.valid);
  const mergedWide = mergeCrl(full3.crl, wide.crl);
  assert.ok(mergedWide.valid);
  assert.deepEqual(mergedWide.crl.entries, full5.entries);
});

test('mergeCrl refuses what would not rebuild the full list', () => {
  const e = (n: number) => ({ attestation_id: `att_${String(n).padStart(26, '0')}`, revoked_at: '2026-03-20T00:00:00Z', reason: 'other' });
  const v = (c: ReturnType<typeof crl>) => {
    const r = verifyCrl(c, doc);
    assert.ok(r.valid, r.valid ? '' : r.message);
    return r.crl;
  };
  const full = v(crl({ crl_number: 3, issued_at: '2026-03-25T00:00:00Z', entries: [e(1), e(2), e(3)] }));
  const cases: [string, ReturnType<typeof mergeCrl>][] = [
    ['gap', mergeCrl(full, v(crl({ crl_number: 6, base_crl_number: 4, issued_at: '2026-03-26T00:00:00Z', entries: [e(5), e(6)] })))],
    ['older', mergeCrl(full, v(crl({ crl_number: 2, base_crl_number: 1, issued_at: '2026-03-24T00:00:00Z', entries: [e(2)] })))],
    ['older', mergeCrl(full, v(crl({ crl_number: 3, base_crl_number: 3, issued_at: '2026-03-24T00:00:00Z', entries: [] })))],
    [
      'conflict',
      mergeCrl(
        full,
        v(
          crl({
            crl_number: 4,
            base_crl_number: 2,
            issued_at: '2026-03-26T00:00:00Z',
            entries: [{ ...e(3), reason: 'compromised' }, e(4)],
          }),
        ),
      ),
    ],
    ['not_delta', mergeCrl(full, full)],
    ['not_full', mergeCrl(v(crl({ crl_number: 4, base_crl_number: 3, issued_at: '2026-03-26T00:00:00Z', entries: [e(4)] })), full)],
    ['not_verified', mergeCrl({ ...full }, full)],
    ['not_verified', mergeCrl(null as never, undefined as never)],
  ];
  for (const [reason, result] of cases) {
    assert.equal(result.valid, false, reason);
    assert.equal(result.reason, reason);
  }
  const otherDoc = keyDocument([k1, k2], 'other');
  const foreign = verifyCrl(
    signDocument(
      {
        version: '1.0',
        issuer: 'other',
        crl_number: 4,
        base_crl_number: 3,
        issued_at: '2026-03-26T00:00:00Z',
        next_update: '2026-03-26T00:15:00Z',
        entries: [],
      },
      k1,
    ),
    otherDoc,
  );
  assert.ok(foreign.valid);
  assert.equal(mergeCrl(full, foreign.crl).reason, 'issuer_mismatch');
  // An equal delta only refreshes issued_at.
  const same = mergeCrl(full, v(crl({ crl_number: 3, base_crl_number: 3, issued_at: '2026-03-26T00:00:00Z', entries: [] })));
  assert.ok(same.valid);
  assert.deepEqual(same.crl.entries, full.entries);
  assert.equal(same.crl.issued_at, '2026-03-26T00:00:00Z');
});

test('verifyCrl checks the CRL shape and its key like an attestation', () => {
  const good = crl({
    crl_number: 1,
    issued_at: '2026-03-25T00:00:00Z',
    entries: [{ attestation_id: 'a', revoked_at: '2026-03-20T00:00:00Z', reason: 'other' }],
  });
  assert.equal(verifyCrl(good, doc).valid, true);
  const bad: [string, unknown][] = [
    ['malformed', { ...good, crl_number: -1 }],
    ['malformed', { ...good, crl_number: 1.5 }],
    ['malformed', { ...good, version: '2.0' }],
    ['malformed', { ...good, issued_at: '2026-03-25T00:00:00.000Z' }],
    ['malformed', { ...good, next_update: '2026-03-24T00:00:00Z' }],
    ['malformed', { ...good, entries: [good.entries[0], good.entries[0]] }],
    ['malformed', { ...good, entries: [{ ...good.entries[0], reason: 'bored' }] }],
    ['malformed', { ...good, base_crl_number: 2 }],
    ['malformed', { ...good, extra: true }],
    ['malformed', { ...good, signature: 5 }],
    ['unknown_key', { ...good, key_id: 'nope' }],
    ['bad_signature', { ...good, crl_number: 2 }],
    ['key_not_valid_at_issue', crl({ crl_number: 1, issued_at: '2026-03-25T00:00:00Z', entries: [] }, k2)],
  ];
  for (const [reason, value] of bad) assert.equal(verifyCrl(value, doc).reason, reason, JSON.stringify(value));
  for (const garbage of [null, undefined, 1, 'crl', [], [good], true]) {
    assert.equal(verifyCrl(garbage, doc).reason, 'malformed');
    assert.equal(verifyCrl(good, garbage).reason, 'malformed');
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyAttestation, type AttestationReason } from './verify.js';
import { verifyCrl } from '../crl/verify.js';
import { mergeCrl } from '../crl/merge.js';
import { keyDocument, makeKey, signDocument } from '../testing/issuer.js';

// Two consecutive keys: rotation closed k1's window when k2's opened.
const k1 = makeKey('k1', '2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z');
const k2 = makeKey('k2', '2026-06-01T00:00:00Z', null);
const outsider = makeKey('k1', '2026-01-01T00:00:00Z', null); // same key_id, another key pair
const doc = keyDocument([k1, k2]);

const body = {
  id: 'att_01jd8x3v7w2q9h6f5k4m3n2p1r',
  version: '1.0',
  subject_id: 'cust-42:retail',
  level: 'KYC2',
  issued_at: '2026-03-10T12:00:00Z',
  expires_at: '2027-03-10T12:00:00Z',
  issuer: 'cauri',
  verifications: [
    { type: 'id_doc', verified_at: '2026-03-09T10:00:00.123Z', method: 'ocr' },
    { type: 'selfie', verified_at: '2026-03-09T10:01:00Z' },
    { type: 'address', verified_at: '2026-03-09T10:02:00Z' },
    { type: 'liveness', verified_at: '2026-03-09T10:03:00Z' },
  ],
  jurisdictions: ['UEMOA', 'GHANA'],
};
const att = signDocument(body, k1);
const now = new Date('2026-04-01T00:00:00Z');

function expectReason(result: ReturnType<typeof verifyAttestation>, reason: AttestationReason, label: string = reason): void {
  assert.equal(result.valid, false, label);
  assert.equal(result.reason, reason, `${label}: ${result.valid ? '' : result.message}`);
  if (!result.valid) assert.equal(typeof result.message, 'string');
}

function crl(
  fields: {
    crl_number: number;
    issued_at: string;
    entries: { attestation_id: string; revoked_at: string; reason: string }[];
    base_crl_number?: number;
  },
  key = k1,
) {
  const next = new Date(Date.parse(fields.issued_at) + 900_000).toISOString().replace('.000Z', 'Z');
  return signDocument({ version: '1.0', issuer: 'cauri', ...fields, next_update: next }, key);
}

test('a genuine attestation verifies; without a CRL, revocation is reported unchecked', () => {
  const result = verifyAttestation(att, doc, { now });
  assert.equal(result.valid, true);
  assert.ok(result.valid);
  assert.equal(result.reason, null);
  assert.equal(result.revocation_checked, false);
  assert.equal(result.crl_number, null);
  assert.equal(result.attestation.id, body.id);
  // jurisdictions is optional in the standalone schema.
  const { jurisdictions: _, ...rest } = body;
  assert.equal(verifyAttestation(signDocument(rest, k1), doc, { now }).valid, true);
  // A JSON round trip (what a relying party receives) changes nothing.
  assert.equal(verifyAttestation(JSON.parse(JSON.stringify(att)), JSON.parse(JSON.stringify(doc)), { now }).valid, true);
});

test('changing any member breaks the signature', () => {
  const changes: Record<string, unknown> = {
    id: 'att_01jd8x3v7w2q9h6f5k4m3n2p1s',
    subject_id: 'cust-43',
    level: 'KYC3',
    issued_at: '2026-03-10T12:00:01Z',
    expires_at: '2028-03-10T12:00:00Z',
    verifications: body.verifications.slice(0, 3),
    jurisdictions: ['UEMOA'],
  };
  for (const [member, value] of Object.entries(changes)) {
    expectReason(verifyAttestation({ ...att, [member]: value }, doc, { now }), 'bad_signature', member);
  }
  const nested = structuredClone(att);
  nested.verifications[0]!.method = 'manual';
  expectReason(verifyAttestation(nested, doc, { now }), 'bad_signature', 'nested member');
  const { jurisdictions: _, ...dropped } = att;
  expectReason(verifyAttestation(dropped, doc, { now }), 'bad_signature', 'dropped member');
});

test('flipping any bit of the signature is rejected', () => {
  const bytes = Buffer.from(att.signature, 'base64url');
  for (let i = 0; i < 64; i++) {
    for (const bit of [0x01, 0x80]) {
      const flipped = Buffer.from(bytes);
      flipped[i]! ^= bit;
      expectReason(verifyAttestation({ ...att, signature: flipped.toString('base64url') }, doc, { now }), 'bad_signature', `byte ${i}`);
    }
  }
  for (const signature of ['', att.signature + 'A', att.signature.slice(1), att.signature + '==', Buffer.from(bytes).toString('base64')]) {
    expectReason(verifyAttestation({ ...att, signature }, doc, { now }), 'bad_signature', `encoding ${signature}`);
  }
});

test('key selection: unknown key_id, another real key, another issuer, the window of the key', () => {
  expectReason(verifyAttestation({ ...att, key_id: 'k9' }, doc, { now }), 'unknown_key');
  // Signed by k1, relabelled k2: k2 was not yet valid at issued_at.
  expectReason(verifyAttestation({ ...att, key_id: 'k2' }, doc, { now }), 'key_not_valid_at_issue', 'swap to k2');
  // Relabelled to a real key whose window also covers issued_at: not the signer.
  const k3 = makeKey('k3', '2026-01-01T00:00:00Z', null);
  expectReason(verifyAttestation({ ...att, key_id: 'k3' }, keyDocument([k1, k2, k3]), { now }), 'bad_signature', 'swap to k3');
  // Re-signed as k2 at a time k2 was not yet valid.
  expectReason(verifyAttestation(signDocument(body, k2), doc, { now }), 'key_not_valid_at_issue');
  // valid_until is exclusive: issued at k1's last instant+1 s, k1 no longer signs.
  const atRotation = { ...body, issued_at: '2026-06-01T00:00:00Z', expires_at: '2027-06-01T00:00:00Z' };
  expectReason(verifyAttestation(signDocument(atRotation, k1), doc, { now }), 'key_not_valid_at_issue', 'k1 at rotation');
  assert.equal(verifyAttestation(signDocument(atRotation, k2), doc, { now }).valid, true);
  const early = { ...body, issued_at: '2025-12-31T23:59:59Z' };
  expectReason(verifyAttestation(signDocument(early, k1), doc, { now }), 'key_not_valid_at_issue', 'before k1');
  // A key pair the key document does not hold, under a listed key_id.
  expectReason(verifyAttestation(signDocument(body, outsider), doc, { now }), 'bad_signature', 'outsider');
  // The key document of another issuer, and an attestation naming another issuer.
  expectReason(verifyAttestation(att, keyDocument([k1, k2], 'other'), { now }), 'unknown_key', 'other issuer document');
  expectReason(verifyAttestation(signDocument({ ...body, issuer: 'other' }, k1), doc, { now }), 'unknown_key', 'other issuer');
  // Algorithms are pinned: the same key labelled otherwise is not used.
  const relabelled = structuredClone(doc);
  relabelled.keys[0]!.algorithm = 'EdDSA';
  expectReason(verifyAttestation(att, relabelled, { now }), 'unknown_key', 'algorithm');
  const duplicated = keyDocument([k1, k1, k2]);
  expectReason(verifyAttestation(att, duplicated, { now }), 'unknown_key', 'duplicate key_id');
});

test('expiry: valid until the instant before expires_at', () => {
  assert.equal(verifyAttestation(att, doc, { now: new Date('2027-03-10T11:59:59.999Z') }).valid, true);
  expectReason(verifyAttestation(att, doc, { now: new Date('2027-03-10T12:00:00Z') }), 'expired');
  expectReason(verifyAttestation(att, doc, { now: new Date('2030-01-01T00:00:00Z') }), 'expired');
  // The default clock is the current time; this attestation expired in 2027 at the latest... or not yet:
  const defaultNow = verifyAttestation(att, doc);
  assert.equal(defaultNow.valid, Date.now() < Date.parse(body.expires_at));
});

test('revocation through a real signed CRL, staleness, and a CRL with a bad signature', () => {
  const other = { attestation_id: 'att_01jd8x3v7w2q9h6f5k4m3n2p1z', revoked_at: '2026-03-20T00:00:00Z', reason: 'superseded' };
  const clean = crl({ crl_number: 1, issued_at: '2026-03-31T23:00:00Z', entries: [other] });
  const checked = verifyAttestation(att, doc, { now, crl: clean });
  assert.ok(checked.valid);
  assert.equal(checked.revocation_checked, true);
  assert.equal(checked.crl_number, 1);

  const revoked = crl({
    crl_number: 2,
    issued_at: '2026-03-31T23:00:00Z',
    entries: [other, { attestation_id: body.id, revoked_at: '2026-03-30T00:00:00Z', reason: 'compromised' }],
  });
  expectReason(verifyAttestation(att, doc, { now, crl: revoked }), 'revoked');
  // Revocation wins even if the entry post-dates `now` (clock skew cannot un-revoke).
  expectReason(verifyAttestation(att, doc, { now: new Date('2026-03-29T00:00:00Z'), crl: revoked }), 'revoked', 'future entry');

  // Exactly 24 h old is still acceptable; one second more is stale.
  assert.equal(verifyAttestation(att, doc, { now: new Date('2026-04-01T23:00:00Z'), crl: clean }).valid, true);
  expectReason(verifyAttestation(att, doc, { now: new Date('2026-04-01T23:00:01Z'), crl: clean }), 'crl_stale');
  expectReason(verifyAttestation(att, doc, { now, crl: clean, maxCrlAge: 900 }), 'crl_stale', 'maxCrlAge 900');
  // A stale list decides nothing, even when it lists the attestation.
  expectReason(verifyAttestation(att, doc, { now: new Date('2026-04-05T00:00:00Z'), crl: revoked }), 'crl_stale', 'stale revoked');

  const tampered = { ...revoked, entries: [other] }; // entry removed after signing
  expectReason(verifyAttestation(att, doc, { now, crl: tampered }), 'crl_bad_signature', 'entry removed');
  const sigBytes = Buffer.from(clean.signature, 'base64url');
  sigBytes[10]! ^= 4;
  expectReason(
    verifyAttestation(att, doc, { now, crl: { ...clean, signature: sigBytes.toString('base64url') } }),
    'crl_bad_signature',
    'flipped',
  );
  expectReason(
    verifyAttestation(att, doc, { now, crl: crl({ crl_number: 1, issued_at: '2026-03-31T23:00:00Z', entries: [] }, outsider) }),
    'crl_bad_signature',
    'outsider key',
  );
  expectReason(
    verifyAttestation(att, doc, { now, crl: crl({ crl_number: 1, issued_at: '2026-07-01T00:00:00Z', entries: [] }, k1) }),
    'crl_bad_signature',
    'k1 after its window',
  );
  expectReason(verifyAttestation(att, doc, { now, crl: { not: 'a crl' } }), 'crl_bad_signature', 'garbage CRL');
  expectReason(verifyAttestation(att, doc, { now, crl: null }), 'crl_bad_signature', 'null CRL');
  // A delta alone cannot decide.
  const delta = crl({ crl_number: 2, base_crl_number: 1, issued_at: '2026-03-31T23:00:00Z', entries: [] });
  expectReason(verifyAttestation(att, doc, { now, crl: delta }), 'crl_bad_signature', 'delta');
  // A look-alike of a verified list is verified as a signed list, and fails.
  const verified = verifyCrl(clean, doc);
  assert.ok(verified.valid);
  expectReason(verifyAttestation(att, doc, { now, crl: { ...verified.crl } }), 'crl_bad_signature', 'forged view');
  assert.equal(verifyAttestation(att, doc, { now, crl: verified.crl }).valid, true);
});

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

test('garbage never throws and is malformed', () => {
  const garbage: unknown[] = [
    null,
    undefined,
    0,
    NaN,
    'att',
    [],
    [att],
    true,
    {},
    () => 1,
    Symbol('x'),
    1n,
    new Date(),
    { ...att, version: '1.1' },
    { ...att, version: 1 },
    { ...att, level: 'KYC4' },
    { ...att, id: '' },
    { ...att, id: 7 },
    { ...att, subject_id: 'has space' },
    { ...att, subject_id: 'x'.repeat(129) },
    { ...att, issued_at: '2026-03-10T12:00:00.000Z' },
    { ...att, issued_at: '2026-03-10T12:00:00+00:00' },
    { ...att, issued_at: '2026-02-30T12:00:00Z' },
    { ...att, issued_at: '2026-03-10 12:00:00Z' },
    { ...att, issued_at: 1773144000 },
    { ...att, expires_at: att.issued_at },
    { ...att, issuer: '' },
    { ...att, verifications: [] },
    { ...att, verifications: {} },
    { ...att, verifications: [{ type: 'dna', verified_at: '2026-03-09T10:00:00Z' }] },
    { ...att, verifications: [{ type: 'pep' }] },
    { ...att, verifications: [null] },
    { ...att, verifications: [...att.verifications, att.verifications[1]] },
    { ...att, verifications: [{ ...att.verifications[0], extra: 1 }] },
    { ...att, verifications: [{ ...att.verifications[0], method: 5 }] },
    { ...att, jurisdictions: [] },
    { ...att, jurisdictions: ['MARS'] },
    { ...att, jurisdictions: ['UEMOA', 'UEMOA'] },
    { ...att, jurisdictions: null },
    { ...att, key_id: '' },
    { ...att, key_id: null },
    { ...att, signature: null },
    { ...att, status: 'active' },
    (({ signature: _, ...r }) => r)(att),
    (({ key_id: _, ...r }) => r)(att),
    (({ id: _, ...r }) => r)(att),
    Object.assign(Object.create({ inherited: 1 }) as object, att),
  ];
  for (const value of garbage) {
    const result = verifyAttestation(value, doc, { now });
    assert.equal(result.valid, false);
    assert.equal(result.reason, 'malformed', typeof value === 'object' ? Object.keys(value ?? {}).join() : typeof value);
  }
  for (const badDoc of [null, undefined, 1, 'doc', [], {}, { issuer: 'cauri' }, { keys: [] }, { issuer: 'cauri', keys: {} }]) {
    assert.equal(verifyAttestation(att, badDoc, { now }).reason, 'malformed');
  }
  // Malformed key entries never match.
  for (const keys of [
    [null],
    [{ key_id: 'k1' }],
    [{ ...doc.keys[0], public_key: 5 }],
    [{ ...doc.keys[0], valid_from: 'x' }],
    [{ ...doc.keys[0], public_key: 'AAAA' }],
  ]) {
    const result = verifyAttestation(att, { ...doc, keys }, { now });
    assert.equal(result.valid, false);
    assert.ok(result.reason === 'unknown_key' || result.reason === 'bad_signature', result.reason);
  }
  for (const options of [
    null,
    5,
    { now: 'yesterday' },
    { now: new Date('x') },
    { maxCrlAge: -1 },
    { maxCrlAge: '1' },
    { maxCrlAge: NaN },
  ]) {
    assert.equal(verifyAttestation(att, doc, options as never).reason, 'malformed', JSON.stringify(options));
  }
  // Hostile objects: a throwing getter and a Proxy still give a verdict.
  const getter = Object.defineProperty({ ...att }, 'level', {
    get() {
      throw new Error('boom');
    },
    enumerable: true,
  });
  assert.equal(verifyAttestation(getter, doc, { now }).reason, 'malformed');
  const proxy = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('boom');
      },
      getPrototypeOf() {
        throw new Error('boom');
      },
    },
  );
  assert.equal(verifyAttestation(proxy, doc, { now }).reason, 'malformed');
  assert.equal(verifyAttestation(att, proxy, { now }).reason, 'malformed');
  assert.equal(verifyAttestation(att, doc, { now, crl: proxy }).reason, 'crl_bad_signature');
});

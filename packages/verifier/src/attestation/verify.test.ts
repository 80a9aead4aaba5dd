import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyAttestation } from './verify.js';
import { verifyCrl } from '../crl/verify.js';
import { keyDocument, makeKey, signDocument } from '../testing/issuer.js';
import { att, body, crl, doc, expectReason, k1, k2, now, outsider } from '../testing/attestation-fixtures.js';

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
  // maxCrlAge tightens the 24-hour rule and cannot widen it: a list 25 h old never decides, whatever the option.
  const dayAndHourLater = new Date('2026-04-02T00:00:00Z');
  expectReason(verifyAttestation(att, doc, { now: dayAndHourLater, crl: clean, maxCrlAge: 172_800 }), 'malformed', 'maxCrlAge 2 days');
  expectReason(verifyAttestation(att, doc, { now: dayAndHourLater, crl: revoked, maxCrlAge: 86_401 }), 'malformed', 'maxCrlAge 86401');
  expectReason(verifyAttestation(att, doc, { now: dayAndHourLater, crl: clean, maxCrlAge: 86_400 }), 'crl_stale', 'maxCrlAge 86400');
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
    // Every date-time of an attestation is in whole seconds, UTC, the issuer's own form.
    { ...att, verifications: [{ ...att.verifications[0], verified_at: '2026-03-09T10:00:00.123Z' }] },
    { ...att, verifications: [{ ...att.verifications[0], verified_at: '2026-03-09T10:00:00+00:00' }] },
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
    { maxCrlAge: 86_401 },
    { maxCrlAge: Infinity },
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

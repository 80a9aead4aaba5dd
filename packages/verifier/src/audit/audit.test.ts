import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { attestationDigest, auditLeafHash, encodeAuditLeaf } from './leaf.js';
import { verifySnapshot } from './verify-snapshot.js';
import { verifySnapshotProof } from './verify-proof.js';
import { verifySnapshotChain } from './verify-chain.js';
import type { AuditLeaf } from './types.js';
import { inclusionProof, rootFromLeafHashes } from '../merkle/tree.js';
import { emptyRoot } from '../merkle/hash.js';
import { canonicalize } from '../jcs/canonicalize.js';
import { keyDocument, makeKey, signDocument } from '../testing/issuer.js';

const k1 = makeKey('k1', '2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z');
const k2 = makeKey('k2', '2026-06-01T00:00:00Z', null);
const doc = keyDocument([k1, k2]);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const attestation = signDocument(
  {
    id: 'att_0000000000000000000000000a',
    version: '1.0',
    subject_id: 's1',
    level: 'KYC1',
    issued_at: '2026-03-01T00:00:00Z',
    expires_at: '2027-03-01T00:00:00Z',
    issuer: 'cauri',
    verifications: [
      { type: 'id_doc', verified_at: '2026-03-01T00:00:00Z' },
      { type: 'selfie', verified_at: '2026-03-01T00:00:00Z' },
    ],
  },
  k1,
);

// The day's orders, leaves ordered by order id.
const leaves: AuditLeaf[] = Array.from({ length: 11 }, (_, i) => ({
  id: `ord_${String(i).padStart(26, '0')}`,
  rcpt_to: 'sgi_00000000000000000000000001',
  kyc_attestation_id: attestation.id,
  kyc_attestation_sha256: attestationDigest(attestation),
  instrument: 'SNTS.BRVM',
  side: i % 2 === 0 ? 'buy' : 'sell',
  qty: 10 + i,
  limit_price_cents: i === 3 ? null : 150_000 + i,
  created_at: `2026-05-31T10:00:${String(i).padStart(2, '0')}.123Z`,
}));
const leafHashes = leaves.map(auditLeafHash);
const root = hex(rootFromLeafHashes(leafHashes));

function snapshot(date: string, merkle_root: string, count: number, previous: string | null, key = k1) {
  const signed = signDocument({ date, merkle_root, count, anchored_at: `${date}T00:00:00Z`, previous_merkle_root: previous }, key, [
    'anchors',
  ]);
  // Anchors are added after signing and are not covered.
  return { ...signed, anchors: [{ chain: 'sandbox', tx_hash: '0xabc', block_height: 7 }] };
}

function proofFor(i: number) {
  return {
    date: '2026-05-31',
    order_id: leaves[i]!.id,
    leaf_index: i,
    tree_size: leaves.length,
    leaf: encodeAuditLeaf(leaves[i]!),
    leaf_hash: hex(leafHashes[i]!),
    audit_path: inclusionProof(leafHashes, i).map(hex),
    merkle_root: root,
  };
}

test('leaf encoding: RFC 8785 text of exactly the leaf members; attestation digest of the signed object', () => {
  const text = encodeAuditLeaf({ ...leaves[3]!, status: 'filled' } as AuditLeaf);
  assert.equal(text, canonicalize(leaves[3]));
  assert.ok(text.includes('"limit_price_cents":null'));
  assert.equal(
    hex(auditLeafHash(leaves[3]!)),
    createHash('sha256')
      .update(Buffer.concat([Buffer.of(0), Buffer.from(text)]))
      .digest('hex'),
  );
  assert.equal(attestationDigest(attestation), createHash('sha256').update(canonicalize(attestation)).digest('hex'));
  assert.throws(() => encodeAuditLeaf({ ...leaves[0]!, qty: undefined } as never));
});

test('a signed snapshot verifies; anchors are outside the signature; every signed member is inside', () => {
  const snap = snapshot('2026-05-31', root, leaves.length, hex(emptyRoot()), k2);
  assert.equal(verifySnapshot(snap, doc).valid, true);
  assert.equal(verifySnapshot({ ...snap, anchors: [] }, doc).valid, true);
  const { anchors: _, ...bare } = snap;
  assert.equal(verifySnapshot(bare, doc).valid, true);
  for (const [member, value] of Object.entries({
    date: '2026-05-30',
    merkle_root: hex(leafHashes[0]!),
    count: 12,
    anchored_at: '2026-06-01T00:00:01Z',
    previous_merkle_root: null,
  })) {
    assert.equal(verifySnapshot({ ...snap, [member]: value }, doc).reason, 'bad_signature', member);
  }
  const sig = Buffer.from(snap.signature, 'base64url');
  sig[63]! ^= 0x10;
  assert.equal(verifySnapshot({ ...snap, signature: sig.toString('base64url') }, doc).reason, 'bad_signature');
  assert.equal(verifySnapshot({ ...snap, key_id: 'k7' }, doc).reason, 'unknown_key');
});

test('a member named __proto__ added to a signed snapshot is signed content like any other, so it breaks the signature', () => {
  const snap = snapshot('2026-05-31', root, leaves.length, hex(emptyRoot()), k2);
  // JSON.parse makes "__proto__" an own member; copying it by assignment would set the copy's
  // prototype instead, dropping the member from the signed bytes.
  for (const value of ['null', '"x"', '7', 'true']) {
    const hostile: unknown = JSON.parse(JSON.stringify(snap).replace('{', `{"__proto__":${value},`));
    assert.equal(verifySnapshot(hostile, doc).reason, 'bad_signature', value);
  }
});

test('key window: the key must still be valid when the day ends', () => {
  // 2026-05-31 ends at 2026-06-01T00:00:00Z, when k1 retires: k1 cannot have sealed it.
  assert.equal(verifySnapshot(snapshot('2026-05-31', root, 11, null, k1), doc).reason, 'key_not_valid_at_issue');
  assert.equal(verifySnapshot(snapshot('2026-05-31', root, 11, null, k2), doc).valid, true);
  assert.equal(verifySnapshot(snapshot('2026-05-30', root, 11, null, k1), doc).valid, true);
  // A later key may sign an earlier day (on-demand rebuild).
  assert.equal(verifySnapshot(snapshot('2026-03-01', root, 11, null, k2), doc).valid, true);
});

test('snapshot shape', () => {
  const snap = snapshot('2026-05-30', root, 11, null);
  for (const bad of [
    null,
    [],
    'x',
    { ...snap, date: '2026-5-30' },
    { ...snap, date: '2026-02-30' },
    { ...snap, merkle_root: root.toUpperCase() },
    { ...snap, count: -1 },
    { ...snap, count: '11' },
    { ...snap, previous_merkle_root: 'ab' },
    { ...snap, key_id: 1 },
    { ...snap, signature: null },
    snapshot('2026-05-30', root, 0, null),
  ]) {
    assert.equal(verifySnapshot(bad, doc).reason, 'malformed');
  }
  assert.equal(verifySnapshot(snapshot('2026-05-30', hex(emptyRoot()), 0, null), doc).valid, true);
});

test('every order of the day has a verifying proof; tampering is caught', () => {
  const snap = snapshot('2026-05-31', root, leaves.length, null, k2);
  for (let i = 0; i < leaves.length; i++) {
    const result = verifySnapshotProof(proofFor(i), snap, { attestation });
    assert.ok(result.valid, result.valid ? '' : result.message);
    assert.deepEqual(result.leaf, leaves[i]);
  }
  const p = proofFor(5);
  const cases: [string, unknown, unknown?][] = [
    ['snapshot_mismatch', { ...p, date: '2026-05-30' }],
    ['snapshot_mismatch', { ...p, tree_size: 12 }],
    ['snapshot_mismatch', { ...p, merkle_root: hex(leafHashes[0]!) }],
    ['leaf_mismatch', { ...p, order_id: leaves[4]!.id }],
    ['leaf_mismatch', { ...p, leaf: encodeAuditLeaf({ ...leaves[5]!, qty: 1_000 }) }],
    ['leaf_mismatch', { ...p, leaf_hash: hex(leafHashes[4]!) }],
    ['bad_proof', { ...p, leaf_index: 4 }],
    ['bad_proof', { ...p, audit_path: p.audit_path.slice(1) }],
    ['bad_proof', { ...p, audit_path: [...p.audit_path].reverse() }],
    ['malformed', { ...p, leaf: JSON.stringify(leaves[5], null, 1) }],
    ['malformed', { ...p, leaf: '{' }],
    ['malformed', { ...p, leaf: canonicalize({ ...leaves[5], extra: 1 }) }],
    ['malformed', { ...p, audit_path: [p.audit_path[0]!.toUpperCase()] }],
    ['malformed', { ...p, leaf_hash: 'zz' }],
    ['malformed', { ...p, leaf_index: -1 }],
    ['malformed', null],
    ['malformed', p, null],
  ];
  for (const [reason, proof, snapshotOverride] of cases) {
    const result = verifySnapshotProof(proof, snapshotOverride === undefined ? snap : snapshotOverride);
    assert.equal(result.reason, reason, JSON.stringify(proof)?.slice(0, 100));
  }
  // The leaf as an object is accepted and canonicalised.
  assert.equal(verifySnapshotProof({ ...p, leaf: JSON.parse(p.leaf) }, snap).valid, true);
  // The attestation behind the order: another one, or the same one altered, is refused.
  const { signature: _s, key_id: _k, ...unsigned } = attestation;
  const other = signDocument({ ...unsigned, id: 'att_0000000000000000000000000b' }, k1);
  assert.equal(verifySnapshotProof(p, snap, { attestation: other }).reason, 'attestation_mismatch');
  assert.equal(verifySnapshotProof(p, snap, { attestation: { ...attestation, level: 'KYC3' } }).reason, 'attestation_mismatch');
});

test('snapshot chain: consecutive days, previous root', () => {
  const day1 = snapshot('2026-02-28', root, 11, null);
  const day2 = snapshot('2026-03-01', hex(emptyRoot()), 0, root);
  assert.deepEqual(verifySnapshotChain(day1, day2), { valid: true, reason: null });
  assert.equal(verifySnapshotChain(day2, day1).reason, 'not_consecutive');
  assert.equal(verifySnapshotChain(day1, { ...day2, date: '2026-03-02' }).reason, 'not_consecutive');
  assert.equal(verifySnapshotChain(day1, { ...day2, previous_merkle_root: hex(emptyRoot()) }).reason, 'root_mismatch');
  assert.equal(verifySnapshotChain(day1, null).reason, 'malformed');
  assert.equal(verifySnapshotChain({ ...day1, date: 'x' }, day2).reason, 'malformed');
  // Year and leap-year boundaries.
  assert.equal(verifySnapshotChain({ ...day1, date: '2028-02-28' }, { ...day2, date: '2028-02-29' }).valid, true);
  assert.equal(verifySnapshotChain({ ...day1, date: '2026-12-31' }, { ...day2, date: '2027-01-01' }).valid, true);
});

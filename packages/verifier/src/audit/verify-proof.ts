import { canonicalize } from '../jcs/canonicalize.js';
import { decodeHex } from '../internal/encoding.js';
import { isCount, isJsonObject, isNonEmptyString, unknownMember } from '../internal/guards.js';
import { parseDate } from '../internal/time.js';
import { hashLeaf } from '../merkle/hash.js';
import { verifyInclusion } from '../merkle/verify-inclusion.js';
import { AUDIT_LEAF_MEMBERS, attestationDigest } from './leaf.js';
import type { AuditLeaf, SnapshotProofReason, SnapshotProofVerification } from './types.js';

const LEAF_MEMBERS = new Set<string>(AUDIT_LEAF_MEMBERS);

export interface VerifySnapshotProofOptions {
  /** The signed attestation the order claims; checked against kyc_attestation_id and kyc_attestation_sha256. */
  attestation?: unknown;
}

/**
 * Verifies that an order is in a day's snapshot: the proof of
 * `GET /v1/audit/snapshots/{date}/proofs/{order_id}` against the snapshot it names.
 *
 * `leaf` is the RFC 8785 JSON text of the AuditLeaf (it must be canonical, so its text
 * is the hashed bytes and a reader sees the order's fields); an object is also
 * accepted and canonicalised. The leaf hash is RFC 9162 §2.1.1's SHA-256(0x00 || data),
 * and the audit path is checked by §2.1.3.2 against the snapshot's root and count.
 *
 * The snapshot's own signature is not checked here: call verifySnapshot first (the
 * CLI does). Never throws.
 */
export function verifySnapshotProof(
  proof: unknown,
  snapshot: unknown,
  options: VerifySnapshotProofOptions = {},
): SnapshotProofVerification {
  try {
    return run(proof, snapshot, options);
  } catch (error) {
    return fail('malformed', `unreadable input: ${(error as Error).message}`);
  }
}

function run(proof: unknown, snapshot: unknown, options: VerifySnapshotProofOptions): SnapshotProofVerification {
  if (!isJsonObject(proof)) return fail('malformed', 'proof: expected a JSON object');
  if (parseDate(proof['date']) === null) return fail('malformed', 'date: expected YYYY-MM-DD');
  if (!isNonEmptyString(proof['order_id'])) return fail('malformed', 'order_id: expected a non-empty string');
  const { leaf_index: index, tree_size: size } = proof;
  if (!isCount(index) || !isCount(size)) return fail('malformed', 'leaf_index and tree_size: expected non-negative integers');
  const leafHash = typeof proof['leaf_hash'] === 'string' ? decodeHex(proof['leaf_hash'], 32) : null;
  const root = typeof proof['merkle_root'] === 'string' ? decodeHex(proof['merkle_root'], 32) : null;
  if (leafHash === null || root === null) return fail('malformed', 'leaf_hash and merkle_root: expected 64 lowercase hex digits');
  const pathText = proof['audit_path'];
  if (!Array.isArray(pathText)) return fail('malformed', 'audit_path: expected an array');
  const path = (pathText as unknown[]).map((h) => (typeof h === 'string' ? decodeHex(h, 32) : null));
  if (path.includes(null)) return fail('malformed', 'audit_path: expected 64 lowercase hex digits per item');

  if (!isJsonObject(snapshot)) return fail('malformed', 'snapshot: expected a JSON object');
  for (const [member, mine] of [
    ['date', 'date'],
    ['merkle_root', 'merkle_root'],
    ['count', 'tree_size'],
  ] as const) {
    if (proof[mine] !== snapshot[member]) {
      return fail(
        'snapshot_mismatch',
        `proof ${mine} ${JSON.stringify(proof[mine])} differs from snapshot ${member} ${JSON.stringify(snapshot[member])}`,
      );
    }
  }

  const leafValue = proof['leaf'];
  let text: string, leaf: unknown;
  if (typeof leafValue === 'string') {
    text = leafValue;
    try {
      leaf = JSON.parse(text);
    } catch {
      return fail('malformed', 'leaf: not JSON text');
    }
    if (canonicalize(leaf) !== text) return fail('malformed', 'leaf: not in RFC 8785 canonical form');
  } else {
    text = canonicalize(leafValue);
    leaf = leafValue;
  }
  if (!isJsonObject(leaf) || unknownMember(leaf, LEAF_MEMBERS) !== null || AUDIT_LEAF_MEMBERS.some((m) => !(m in leaf))) {
    return fail('malformed', `leaf: expected exactly the members ${AUDIT_LEAF_MEMBERS.join(', ')}`);
  }
  if (leaf['id'] !== proof['order_id'])
    return fail('leaf_mismatch', `the leaf is order ${JSON.stringify(leaf['id'])}, not ${proof['order_id']}`);
  if (!Buffer.from(hashLeaf(Buffer.from(text, 'utf8'))).equals(leafHash)) {
    return fail('leaf_mismatch', 'SHA-256(0x00 || leaf) differs from leaf_hash');
  }
  const included = verifyInclusion(index, size, leafHash, path as Uint8Array[], root);
  if (!included.valid) return fail('bad_proof', `inclusion proof rejected: ${included.reason}`);

  if (options.attestation !== undefined) {
    const att = options.attestation;
    if (!isJsonObject(att) || att['id'] !== leaf['kyc_attestation_id']) {
      return fail('attestation_mismatch', `the order was accepted under attestation ${JSON.stringify(leaf['kyc_attestation_id'])}`);
    }
    if (attestationDigest(att) !== leaf['kyc_attestation_sha256']) {
      return fail('attestation_mismatch', 'the attestation differs from the one the order was accepted under (kyc_attestation_sha256)');
    }
  }
  return { valid: true, reason: null, leaf: leaf as unknown as AuditLeaf };
}

function fail(reason: SnapshotProofReason, message: string): SnapshotProofVerification {
  return { valid: false, reason, message };
}

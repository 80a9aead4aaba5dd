import { encodeHex } from '../internal/encoding.js';
import { isCount, isJsonObject, isNonEmptyString } from '../internal/guards.js';
import { DAY_MS, parseDate } from '../internal/time.js';
import { verifySigned } from '../keys/verify-signed.js';
import { emptyRoot } from '../merkle/hash.js';
import type { AuditSnapshot, SnapshotVerification } from './types.js';

const ROOT = /^[0-9a-f]{64}$/;
const EMPTY_ROOT = encodeHex(emptyRoot());

/**
 * Verifies a snapshot's signature (docs/audit.md): Ed25519 over the
 * RFC 8785 form without `signature` and `anchors` (anchors arrive after signing),
 * with the key named by `key_id`.
 *
 * Key window: the snapshot of day D is signed at some instant t at or after the end
 * of D (D+1 00:00:00Z), and t is not in the signed object: on-demand rebuilds sign
 * later than the daily job. The tightest check that holds for every legitimate t is
 * that the key's window [valid_from, valid_until) reaches past the end of D, i.e.
 * valid_until > D+1T00:00:00Z. A key retired before the day was over cannot have
 * sealed it; that is what is rejected (`key_not_valid_at_issue`).
 *
 * Also checks the shape, and that an empty day (count 0) has the empty-tree root
 * (RFC 9162 §2.1.1). Does not check the chain (verifySnapshotChain) or anchors.
 * Never throws.
 */
export function verifySnapshot(snapshot: unknown, keyDocument: unknown): SnapshotVerification {
  try {
    if (!isJsonObject(snapshot)) return malformed('snapshot: expected a JSON object');
    const day = parseDate(snapshot['date']);
    if (day === null) return malformed('date: expected YYYY-MM-DD');
    if (typeof snapshot['merkle_root'] !== 'string' || !ROOT.test(snapshot['merkle_root'])) {
      return malformed('merkle_root: expected 64 lowercase hex digits');
    }
    if (!isCount(snapshot['count'])) return malformed('count: expected a non-negative integer');
    if (snapshot['count'] === 0 && snapshot['merkle_root'] !== EMPTY_ROOT) {
      return malformed('merkle_root: an empty day has the root SHA-256("")');
    }
    const previous = snapshot['previous_merkle_root'];
    if (previous !== null && (typeof previous !== 'string' || !ROOT.test(previous))) {
      return malformed('previous_merkle_root: expected 64 lowercase hex digits or null');
    }
    if (!isNonEmptyString(snapshot['key_id'])) return malformed('key_id: expected a non-empty string');
    if (typeof snapshot['signature'] !== 'string') return malformed('signature: expected a string');
    const endOfDay = day + DAY_MS;
    const failure = verifySigned(
      snapshot as typeof snapshot & { key_id: string; signature: string },
      null,
      ['signature', 'anchors'],
      keyDocument,
      { accepts: (_from, until) => until > endOfDay, describe: `the end of ${String(snapshot['date'])}` },
    );
    if (failure !== null) return { valid: false, ...failure };
    return { valid: true, reason: null, snapshot: snapshot as unknown as AuditSnapshot };
  } catch (error) {
    return malformed(`unreadable input: ${(error as Error).message}`);
  }
}

function malformed(message: string): SnapshotVerification {
  return { valid: false, reason: 'malformed', message };
}

import type { CrlEntry, VerifiedCrl } from './types.js';
import { isVerifiedCrl, issueVerifiedCrl } from './verified.js';

export type CrlMergeReason =
  | 'not_verified' //    an input did not come from verifyCrl or mergeCrl
  | 'not_full' //        `full` is a delta
  | 'not_delta' //       `delta` has no base_crl_number
  | 'issuer_mismatch'
  | 'gap' //             the delta starts after the full list ends: revocations would be missed
  | 'older' //           the delta predates the full list
  | 'conflict'; //       one attestation revoked twice with different records

export type CrlMerge = { valid: true; reason: null; crl: VerifiedCrl } | { valid: false; reason: CrlMergeReason; message: string };

/**
 * Applies a verified delta list (`GET /v1/kyc/crl?since=N`) to a verified
 * full list, giving the full list as of the delta.
 *
 * `crl_number` grows by one per revocation, and a delta holds the entries numbered
 * after its `base_crl_number`. So the merge is complete exactly when
 * `delta.base_crl_number <= full.crl_number <= delta.crl_number`; a smaller base only
 * repeats entries already held, which is harmless because entries are keyed by
 * `attestation_id` and a revocation is never undone. The result keeps the full list's
 * entries in order and appends the delta's new ones in the delta's order; it takes
 * `crl_number`, `issued_at` and `next_update` from the delta, whose signature vouches
 * for the list up to that number at that instant. It is unsigned (`signed: false`)
 * but marked verified, so verifyAttestation accepts it and mergeCrl can take it as the
 * next full list. Pure; never throws.
 */
export function mergeCrl(full: VerifiedCrl, delta: VerifiedCrl): CrlMerge {
  if (!isVerifiedCrl(full) || !isVerifiedCrl(delta)) {
    return fail('not_verified', 'both lists must come from verifyCrl or mergeCrl');
  }
  if (full.base_crl_number !== null) return fail('not_full', 'the first list is a delta');
  if (delta.base_crl_number === null) return fail('not_delta', 'the second list has no base_crl_number');
  if (full.issuer !== delta.issuer) return fail('issuer_mismatch', `issuers differ: "${full.issuer}" and "${delta.issuer}"`);
  if (delta.base_crl_number > full.crl_number) {
    return fail('gap', `the delta holds entries after ${delta.base_crl_number}, the list ends at ${full.crl_number}`);
  }
  if (delta.crl_number < full.crl_number || Date.parse(delta.issued_at) < Date.parse(full.issued_at)) {
    return fail(
      'older',
      `the delta (number ${delta.crl_number}, ${delta.issued_at}) predates the list (number ${full.crl_number}, ${full.issued_at})`,
    );
  }
  const held = new Map<string, CrlEntry>();
  for (const entry of full.entries) held.set(entry.attestation_id, entry);
  const entries = [...full.entries];
  for (const entry of delta.entries) {
    const known = held.get(entry.attestation_id);
    if (known === undefined) {
      held.set(entry.attestation_id, entry);
      entries.push(entry);
    } else if (known.revoked_at !== entry.revoked_at || known.reason !== entry.reason) {
      return fail('conflict', `attestation "${entry.attestation_id}" has two different revocation records`);
    }
  }
  return {
    valid: true,
    reason: null,
    crl: issueVerifiedCrl({
      issuer: full.issuer,
      crl_number: delta.crl_number,
      base_crl_number: null,
      issued_at: delta.issued_at,
      next_update: delta.next_update,
      entries,
      signed: false,
    }),
  };
}

function fail(reason: CrlMergeReason, message: string): CrlMerge {
  return { valid: false, reason, message };
}

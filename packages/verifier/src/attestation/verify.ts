import { verifyCrl } from '../crl/verify.js';
import { findRevocation, isVerifiedCrl } from '../crl/verified.js';
import type { VerifiedCrl } from '../crl/types.js';
import { verifySigned, windowContaining } from '../keys/verify-signed.js';
import { parseAttestation } from './shape.js';
import type { Attestation } from './types.js';

export type AttestationReason =
  | 'malformed' //             not a version 1.0 attestation, or a malformed key document or option
  | 'unknown_key' //           no Ed25519 key with this key_id, or the key document is another issuer's
  | 'key_not_valid_at_issue' //issued_at outside the key's [valid_from, valid_until)
  | 'bad_signature'
  | 'expired' //               now >= expires_at
  | 'revoked' //               listed in the revocation list
  | 'crl_stale' //             the list is older than maxCrlAge: no decision
  | 'crl_bad_signature'; //    the list given is not an authentic complete list of this issuer

export interface VerifyAttestationOptions {
  /** A signed full CRL as fetched, or a VerifiedCrl from verifyCrl/mergeCrl. */
  crl?: unknown;
  /** The instant of the decision; default: the current time. */
  now?: Date;
  /**
   * Oldest acceptable list, seconds between its issued_at and now: 0 to 86400, default 86400. A
   * relying party must hold a list no older than 24 hours, so the bound can be tightened, never widened.
   */
  maxCrlAge?: number;
}

export type AttestationVerification =
  | {
      valid: true;
      reason: null;
      attestation: Attestation;
      /** false when no CRL was given: the signature and dates hold, revocation is unknown. */
      revocation_checked: boolean;
      /** The number of the list consulted, null when revocation_checked is false. */
      crl_number: number | null;
    }
  | { valid: false; reason: AttestationReason; message: string };

const DEFAULT_MAX_CRL_AGE = 86_400;

/**
 * Offline verification of a KYC attestation (docs/concepts.md#offline-verification),
 * in this order, the first
 * failure deciding the reason:
 *
 * 1. shape of a version 1.0 attestation (closed object, whole-second UTC times);
 * 2. the key document's issuer equals `issuer`, and it lists `key_id` as an Ed25519 key;
 * 3. `issued_at` lies in that key's window [valid_from, valid_until);
 * 4. Ed25519 (RFC 8032 §5.1.7) over the UTF-8 RFC 8785 form without `signature`;
 * 5. `now < expires_at`;
 * 6. with a CRL: it is authentic and complete (verifyCrl, a full list), at most
 *    `maxCrlAge` seconds old at `now`, and does not list the attestation's id.
 *
 * Without a CRL the result can be valid with `revocation_checked: false`: the caller
 * decides whether that is enough (the spec's three offline steps are), instead of
 * this function refusing every decision while a list is being fetched. Any listed
 * entry revokes, whatever its revoked_at, so a clock behind the issuer's cannot
 * un-revoke. Never throws.
 */
export function verifyAttestation(
  attestation: unknown,
  keyDocument: unknown,
  options: VerifyAttestationOptions = {},
): AttestationVerification {
  try {
    return run(attestation, keyDocument, options);
  } catch (error) {
    // Unreachable by design; kept so that a hostile input (a throwing getter, a Proxy)
    // still yields a verdict instead of an exception.
    return { valid: false, reason: 'malformed', message: `unreadable input: ${(error as Error).message}` };
  }
}

function run(attestation: unknown, keyDocument: unknown, options: VerifyAttestationOptions): AttestationVerification {
  if (typeof options !== 'object' || options === null) return fail('malformed', 'options: expected an object');
  const now = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : NaN;
  if (!Number.isFinite(now)) return fail('malformed', 'options.now: expected a valid Date');
  const maxCrlAge = options.maxCrlAge ?? DEFAULT_MAX_CRL_AGE;
  if (typeof maxCrlAge !== 'number' || !(maxCrlAge >= 0 && maxCrlAge <= DEFAULT_MAX_CRL_AGE)) {
    return fail('malformed', `options.maxCrlAge: expected seconds from 0 to ${DEFAULT_MAX_CRL_AGE}`);
  }

  const parsed = parseAttestation(attestation);
  if (typeof parsed === 'string') return fail('malformed', parsed);
  const { attestation: att, issuedAt, expiresAt } = parsed;

  const failure = verifySigned(
    att as typeof att & Record<string, unknown>,
    att.issuer,
    ['signature'],
    keyDocument,
    windowContaining(issuedAt, `issued_at ${att.issued_at}`),
  );
  if (failure !== null) return fail(failure.reason, failure.message);

  if (now >= expiresAt) return fail('expired', `expired at ${att.expires_at}`);

  if (options.crl === undefined) {
    return { valid: true, reason: null, attestation: att, revocation_checked: false, crl_number: null };
  }
  let crl: VerifiedCrl;
  if (isVerifiedCrl(options.crl)) {
    crl = options.crl;
  } else {
    const checked = verifyCrl(options.crl, keyDocument);
    if (!checked.valid) return fail('crl_bad_signature', `CRL rejected (${checked.reason}): ${checked.message}`);
    crl = checked.crl;
  }
  if (crl.base_crl_number !== null) {
    return fail('crl_bad_signature', 'a delta list alone cannot decide revocation: merge it into a full list with mergeCrl');
  }
  if (crl.issuer !== att.issuer) return fail('crl_bad_signature', `the CRL is issuer "${crl.issuer}"'s`);
  const age = (now - Date.parse(crl.issued_at)) / 1000;
  if (age > maxCrlAge) {
    return fail(
      'crl_stale',
      `CRL #${crl.crl_number} was issued at ${crl.issued_at}, ${Math.floor(age)} s before now; at most ${maxCrlAge} s allowed`,
    );
  }
  const entry = findRevocation(crl, att.id);
  if (entry !== undefined) {
    return fail('revoked', `revoked at ${entry.revoked_at} (${entry.reason}), CRL #${crl.crl_number}`);
  }
  return { valid: true, reason: null, attestation: att, revocation_checked: true, crl_number: crl.crl_number };
}

function fail(reason: AttestationReason, message: string): AttestationVerification {
  return { valid: false, reason, message };
}

import type { ErrorDetail } from '../../lib/errors.js';

/** What the checks read of an attestation (a row of the attestations table). */
export interface AttestationInForce {
  readonly revoked_at: number | null;
  /** Epoch milliseconds. */
  readonly expires_at: number;
}

/**
 * Why no order may be placed or amended under the attestation `id` at `now`, as the detail on
 * `kyc_attestation_id` (422): it is not one of this client's (`exists`; `attestation` undefined), it
 * is revoked (`not_revoked`) or it has expired (`not_expired`). Null when it is in force.
 */
export function attestationRefusal(attestation: AttestationInForce | undefined, id: string, now: number): ErrorDetail | null {
  if (attestation === undefined)
    return { field: 'kyc_attestation_id', rule: 'exists', value: id, message: 'no such attestation issued to this client' };
  if (attestation.revoked_at !== null)
    return { field: 'kyc_attestation_id', rule: 'not_revoked', value: id, message: 'attestation is revoked' };
  if (attestation.expires_at <= now)
    return { field: 'kyc_attestation_id', rule: 'not_expired', value: id, message: 'attestation has expired' };
  return null;
}

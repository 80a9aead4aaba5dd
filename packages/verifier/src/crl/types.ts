import type { SignedDocumentReason } from '../keys/types.js';

export type RevocationReason = 'superseded' | 'compromised' | 'subject_request' | 'other';

export interface CrlEntry {
  attestation_id: string;
  revoked_at: string;
  reason: RevocationReason;
}

/**
 * The signed revocation list at `crl_endpoint` (docs/concepts.md).
 * A delta list (`?since=N`) has the same shape plus `base_crl_number: N`.
 */
export interface Crl {
  version: '1.0';
  issuer: string;
  crl_number: number;
  issued_at: string;
  next_update: string;
  entries: CrlEntry[];
  base_crl_number?: number;
  key_id: string;
  signature: string;
}

/**
 * A revocation list whose authenticity this package established: returned by
 * verifyCrl (signed lists) and mergeCrl (a full list brought up to date by a delta).
 * Only these objects are trusted without a signature, so a merged view can be passed
 * to verifyAttestation; a look-alike built by hand is verified as a signed list and fails.
 */
export interface VerifiedCrl {
  readonly issuer: string;
  readonly crl_number: number;
  /** null for a full list; N for a delta that holds the entries after number N. */
  readonly base_crl_number: number | null;
  readonly issued_at: string;
  readonly next_update: string;
  readonly entries: readonly CrlEntry[];
  /** true when this exact list carried a verified signature; false for a merged view. */
  readonly signed: boolean;
}

export type CrlReason = SignedDocumentReason;

export type CrlVerification = { valid: true; reason: null; crl: VerifiedCrl } | { valid: false; reason: CrlReason; message: string };

export type RevocationReason = 'superseded' | 'compromised' | 'subject_request' | 'other';

export interface AttestationTable {
  id: string;
  client_id: string;
  subject_id: string;
  level: string;
  /** JSON array. */
  jurisdictions: string;
  issued_at: number;
  expires_at: number;
  key_id: string;
  /** The signed attestation exactly as issued (JSON text): served as is, never re-built. */
  document: string;
  /** Lowercase hex SHA-256 of the RFC 8785 form of `document` (audit leaves name it). */
  document_sha256: string;
  revoked_at: number | null;
  revocation_reason: RevocationReason | null;
  /** Position in the revocation list; null while not revoked. */
  crl_number: number | null;
}

export type AttestationRow = AttestationTable;

export type KycLevel = 'KYC1' | 'KYC2' | 'KYC3';
export type VerificationType = 'id_doc' | 'address' | 'selfie' | 'liveness' | 'source_of_funds' | 'pep';
export type Jurisdiction = 'UEMOA' | 'CEMAC' | 'GHANA';

export interface KycVerification {
  type: VerificationType;
  verified_at: string;
  method?: string;
}

/** A KYC attestation exactly as signed (docs/concepts.md#attestations). */
export interface Attestation {
  id: string;
  version: '1.0';
  subject_id: string;
  level: KycLevel;
  issued_at: string;
  expires_at: string;
  issuer: string;
  verifications: KycVerification[];
  jurisdictions?: Jurisdiction[];
  key_id: string;
  /** Ed25519 over the RFC 8785 form of the object without `signature`, base64url, no padding. */
  signature: string;
}

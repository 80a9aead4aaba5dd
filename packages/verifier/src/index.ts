// Public API of @cauri/verifier. Everything here is pure (no I/O); the CLI lives in cli.ts.

// RFC 8785 JSON Canonicalization Scheme
export { canonicalize, canonicalizeBytes } from './jcs/canonicalize.js';
export { JcsError, type JcsErrorCode } from './jcs/errors.js';
export { repeatedMemberName } from './internal/json-text.js';

// RFC 8032 Ed25519
export { verifyEd25519 } from './ed25519/verify.js';

// Issuer key document
export type { IssuerKey, KeyDocument, SignedDocumentReason } from './keys/types.js';

// KYC attestations
export { verifyAttestation } from './attestation/verify.js';
export type { AttestationReason, AttestationVerification, VerifyAttestationOptions } from './attestation/verify.js';
export type { Attestation, Jurisdiction, KycLevel, KycVerification, VerificationType } from './attestation/types.js';

// Revocation lists
export { verifyCrl } from './crl/verify.js';
export { mergeCrl } from './crl/merge.js';
export type { CrlMerge, CrlMergeReason } from './crl/merge.js';
export type { Crl, CrlEntry, CrlReason, CrlVerification, RevocationReason, VerifiedCrl } from './crl/types.js';

// RFC 9162 Merkle trees
export { emptyRoot, hashChildren, hashLeaf } from './merkle/hash.js';
export { consistencyProof, inclusionProof, rootFromLeafHashes } from './merkle/tree.js';
export { MerkleTreeBuilder } from './merkle/builder.js';
export { verifyInclusion } from './merkle/verify-inclusion.js';
export { verifyConsistency } from './merkle/verify-consistency.js';
export { MerkleError, type MerkleErrorCode, type MerkleProofReason, type MerkleVerification } from './merkle/errors.js';

// Audit snapshots
export { attestationDigest, auditLeafHash, encodeAuditLeaf } from './audit/leaf.js';
export { verifySnapshot } from './audit/verify-snapshot.js';
export { verifySnapshotProof, type VerifySnapshotProofOptions } from './audit/verify-proof.js';
export { verifySnapshotChain } from './audit/verify-chain.js';
export type {
  Anchor,
  AuditLeaf,
  AuditSnapshot,
  SnapshotChainReason,
  SnapshotChainVerification,
  SnapshotProof,
  SnapshotProofReason,
  SnapshotProofVerification,
  SnapshotReason,
  SnapshotVerification,
} from './audit/types.js';

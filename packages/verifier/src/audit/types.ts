import type { SignedDocumentReason } from '../keys/types.js';

export interface Anchor {
  chain: string;
  tx_hash: string;
  block_height: number;
}

/**
 * The daily snapshot, with the service's extensions (docs/audit.md#what-is-in-a-snapshot).
 * Members beyond these are allowed: they are
 * covered by the signature like the rest.
 */
export interface AuditSnapshot {
  date: string;
  /** Lowercase hex of the RFC 9162 root over the day's leaves. */
  merkle_root: string;
  count: number;
  anchored_at?: string | null;
  /** Not signed: anchors arrive after signing. */
  anchors?: Anchor[];
  /** The previous day's merkle_root; null when there is no previous snapshot. */
  previous_merkle_root: string | null;
  key_id: string;
  signature: string;
}

/** The leaf data of one order (docs/audit.md), before RFC 8785 encoding. */
export interface AuditLeaf {
  id: string;
  rcpt_to: string;
  kyc_attestation_id: string;
  /** Lowercase hex SHA-256 of the RFC 8785 form of the whole signed attestation. */
  kyc_attestation_sha256: string;
  instrument: string;
  side: 'buy' | 'sell';
  qty: number;
  limit_price_cents: number | null;
  created_at: string;
}

/** `GET /v1/audit/snapshots/{date}/proofs/{order_id}`. */
export interface SnapshotProof {
  date: string;
  order_id: string;
  leaf_index: number;
  tree_size: number;
  /** The leaf data as the RFC 8785 JSON text of an AuditLeaf; its UTF-8 bytes are hashed. */
  leaf: string;
  leaf_hash: string;
  /** RFC 9162 §2.1.3.1 PATH, nearest sibling first, lowercase hex. */
  audit_path: string[];
  merkle_root: string;
}

export type SnapshotReason = SignedDocumentReason;

export type SnapshotVerification =
  | { valid: true; reason: null; snapshot: AuditSnapshot }
  | { valid: false; reason: SnapshotReason; message: string };

export type SnapshotProofReason =
  | 'malformed'
  | 'snapshot_mismatch' //    date, root or size differ from the snapshot's
  | 'leaf_mismatch' //        leaf not for order_id, or not hashing to leaf_hash
  | 'bad_proof' //            the audit path does not lead to the root (RFC 9162 §2.1.3.2)
  | 'attestation_mismatch'; //the leaf names another attestation than the one given

export type SnapshotProofVerification =
  | { valid: true; reason: null; leaf: AuditLeaf }
  | { valid: false; reason: SnapshotProofReason; message: string };

export type SnapshotChainReason = 'malformed' | 'not_consecutive' | 'root_mismatch';

export type SnapshotChainVerification = { valid: true; reason: null } | { valid: false; reason: SnapshotChainReason; message: string };

import { createHash } from 'node:crypto';
import { canonicalize } from '../jcs/canonicalize.js';
import { hashLeaf } from '../merkle/hash.js';
import type { AuditLeaf } from './types.js';

export const AUDIT_LEAF_MEMBERS = [
  'id',
  'rcpt_to',
  'kyc_attestation_id',
  'kyc_attestation_sha256',
  'instrument',
  'side',
  'qty',
  'limit_price_cents',
  'created_at',
] as const;

/**
 * The leaf data of an order (docs/audit.md): the RFC 8785 text of
 * exactly the AuditLeaf members, so that a server passing a whole order row cannot
 * leak or hash extra columns. Throws a JcsError if a member is missing (undefined).
 */
export function encodeAuditLeaf(leaf: AuditLeaf): string {
  const picked: Record<string, unknown> = {};
  for (const member of AUDIT_LEAF_MEMBERS) picked[member] = leaf[member];
  return canonicalize(picked);
}

/** RFC 9162 §2.1.1 leaf hash of an order: SHA-256(0x00 || UTF-8(encodeAuditLeaf(leaf))). */
export function auditLeafHash(leaf: AuditLeaf): Uint8Array {
  return hashLeaf(Buffer.from(encodeAuditLeaf(leaf), 'utf8'));
}

/**
 * `kyc_attestation_sha256`: lowercase hex SHA-256 of the RFC 8785 form of the whole
 * signed attestation, signature included. Throws a JcsError for non-JSON input.
 */
export function attestationDigest(attestation: unknown): string {
  return createHash('sha256').update(canonicalize(attestation), 'utf8').digest('hex');
}

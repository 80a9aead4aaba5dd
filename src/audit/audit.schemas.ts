import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable } from '../http/schemas.js';

const Hex32 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });

export const SnapshotParams = Type.Object({
  date: Type.String({ format: 'date', description: 'The UTC day, YYYY-MM-DD (a real calendar day).', examples: ['2026-11-22'] }),
});

export const ProofParams = Type.Object({
  date: Type.String({ format: 'date', description: 'The UTC day, YYYY-MM-DD (a real calendar day).' }),
  order_id: Type.String({ description: 'One of your orders created on that day (ord_...).' }),
});

export const SnapshotAnchor = Type.Object(
  {
    chain: Type.String({ description: 'Chain name: "sandbox", or the configured EVM chain (e.g. "ethereum-sepolia").' }),
    tx_hash: Type.String({
      description: 'The anchoring transaction; on an EVM chain its input is "cau1" || root || date (docs/audit.md).',
    }),
    block_height: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false, title: 'SnapshotAnchor' },
);

/** The AuditSnapshot, with the service's extensions (docs/audit.md#what-is-in-a-snapshot). */
export const AuditSnapshot = Type.Object(
  {
    date: Type.String({ format: 'date', description: 'Snapshot day (UTC)' }),
    merkle_root: Hex32("SHA-256 hex of the RFC 9162 root over the day's orders, ordered by order id"),
    count: Type.Integer({ minimum: 0, description: 'Number of orders in the tree' }),
    anchored_at: DateTime("When the anchor's receipt arrived (whole seconds)"),
    anchors: Type.Array(SnapshotAnchor, { description: 'Not covered by the signature: anchors arrive after the root is fixed.' }),
    previous_merkle_root: Nullable(Hex32('merkle_root of the previous day; null for the first snapshot of the deployment')),
    key_id: Type.String({
      description:
        'The issuer key (listed in the issuer key document, `GET /.well-known/<service name>`) whose window reaches past the end of the day',
    }),
    signature: Type.String({ description: 'Ed25519, base64url, over RFC 8785 of the snapshot without signature and anchors' }),
  },
  { additionalProperties: false, title: 'AuditSnapshot' },
);
export type AuditSnapshot = Static<typeof AuditSnapshot>;

export const SnapshotProof = Type.Object(
  {
    date: Type.String({ format: 'date' }),
    order_id: Type.String(),
    leaf_index: Type.Integer({ minimum: 0 }),
    tree_size: Type.Integer({ minimum: 1 }),
    leaf: Type.String({ description: 'RFC 8785 JSON text of the leaf; its UTF-8 bytes are the hashed leaf data' }),
    leaf_hash: Hex32('SHA-256(0x00 || leaf)'),
    audit_path: Type.Array(Hex32('sibling hash'), { description: 'RFC 9162 §2.1.3.1 PATH, nearest sibling first' }),
    merkle_root: Hex32("The snapshot's merkle_root"),
  },
  { additionalProperties: false, title: 'SnapshotProof' },
);
export type SnapshotProof = Static<typeof SnapshotProof>;

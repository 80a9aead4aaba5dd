/**
 * Lifecycle of a day's snapshot (one row per day, the date is the primary key):
 *
 *   building  a process holds the lease and streams the day's orders into the tree
 *   built     root, count and leaf chunks stored; waiting for the anchor (anchor_tx_hash null)
 *   submitted the anchor transaction is sent (anchor_tx_hash set); polled until confirmed
 *   anchored  the receipt arrived: anchored_at set, the snapshot signed, `audit.snapshot` emitted.
 *             Only this state is served.
 *
 * The snapshot is signed at the receipt, not at the build, because `anchored_at` is one of the
 * signed members (only `signature` and `anchors` are outside the signature).
 */
export type SnapshotState = 'building' | 'built' | 'submitted' | 'anchored';

export interface AuditSnapshotTable {
  date: string;
  state: SnapshotState;
  /** The process building or anchoring this day, while its lease runs. */
  lease_owner: string | null;
  lease_until: number;
  merkle_root: string | null;
  count: number | null;
  previous_merkle_root: string | null;
  /** Leaves per stored chunk (a power of two). */
  chunk_size: number | null;
  /** The chunks' roots (MTH of each chunk's leaves), 32 bytes each, in chunk order. */
  chunk_roots: Buffer | null;
  built_at: number | null;
  anchor_chain: string | null;
  anchor_tx_hash: string | null;
  anchor_block_height: number | null;
  anchor_attempts: number;
  /** The last anchoring failure, for operators. */
  anchor_error: string | null;
  /** When the anchoring step is next due; null once anchored (and while building). */
  next_anchor_at: number | null;
  anchored_at: number | null;
  key_id: string | null;
  signature: string | null;
  created_at: number;
  updated_at: number;
}

export interface AuditChunkTable {
  date: string;
  chunk_index: number;
  /** Id of the chunk's first order (leaves are ordered by order id). */
  first_order_id: string;
  /** The chunk's leaf hashes, 32 bytes each, concatenated in leaf order. */
  leaf_hashes: Buffer;
}

export type AuditSnapshotRow = AuditSnapshotTable;

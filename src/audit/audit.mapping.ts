// Rows of the audit tables as the API serves them.
import { isoSeconds } from '../lib/clock.js';
import type { AuditSnapshot } from './audit.schemas.js';
import type { AuditSnapshotRow } from './audit.table.js';

/** The served AuditSnapshot of an anchored row. */
export function toSnapshot(row: AuditSnapshotRow): AuditSnapshot {
  return {
    date: row.date,
    merkle_root: row.merkle_root!,
    count: row.count!,
    anchored_at: isoSeconds(row.anchored_at!),
    anchors: [{ chain: row.anchor_chain!, tx_hash: row.anchor_tx_hash!, block_height: row.anchor_block_height! }],
    previous_merkle_root: row.previous_merkle_root,
    key_id: row.key_id!,
    signature: row.signature!,
  };
}

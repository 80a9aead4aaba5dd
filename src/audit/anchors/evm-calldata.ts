import { isCalendarDate } from '../../lib/dates.js';
import { assertAnchorInput } from './anchor.js';
import type { AnchorInput } from './anchor.js';

/**
 * The `data` (input) of an anchor transaction on an EVM chain, version 1. 46 bytes:
 *
 *   offset  size  content
 *   0       4     tag, ASCII "cau1" = 0x63 0x61 0x75 0x31 (the layout's version is its last byte)
 *   4       32    the snapshot's merkle_root: its 64 hex characters decoded to raw bytes
 *   36      10    the snapshot's date, ASCII "YYYY-MM-DD"
 *
 * For 2026-11-22 and root 00 01 .. 1f the data is
 *   0x63617531 000102...1f 323032362d31312d3232
 *
 * The date is plain ASCII so that a block explorer's "input as UTF-8" view shows it, and a verifier
 * needs nothing but the snapshot to rebuild the bytes and compare them with the transaction's
 * input. The tag is not a function selector: the transaction goes to an account without code (the
 * sender itself by default), so nothing executes and nothing else is read from these bytes.
 */
export const ANCHOR_TAG = '63617531';
export const ANCHOR_CALLDATA_BYTES = 46;

/** The transaction data anchoring `merkleRoot` for `date`, as 0x-prefixed lowercase hex. Throws TypeError on malformed input. */
export function anchorCalldata(date: string, merkleRoot: string): `0x${string}` {
  assertAnchorInput({ date, merkleRoot });
  return `0x${ANCHOR_TAG}${merkleRoot}${Buffer.from(date, 'ascii').toString('hex')}`;
}

/**
 * Reads a transaction's data back into (date, root), or returns null when it is not a version-1
 * anchor (wrong length or tag, a date that is not a calendar day). Accepts the 0x-prefixed hex of
 * JSON-RPC `input` in either case. The root is returned in lowercase, as snapshots carry it.
 */
export function parseAnchorCalldata(data: string): AnchorInput | null {
  if (!/^0x[0-9a-fA-F]*$/.test(data) || data.length !== 2 + 2 * ANCHOR_CALLDATA_BYTES) return null;
  const hex = data.slice(2).toLowerCase();
  if (!hex.startsWith(ANCHOR_TAG)) return null;
  const merkleRoot = hex.slice(8, 72);
  const date = Buffer.from(hex.slice(72), 'hex').toString('latin1');
  return isCalendarDate(date) ? { date, merkleRoot } : null;
}

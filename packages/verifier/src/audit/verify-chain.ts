import { isJsonObject } from '../internal/guards.js';
import { DAY_MS, parseDate } from '../internal/time.js';
import type { SnapshotChainVerification } from './types.js';

/**
 * Checks that `next` is the snapshot of the day after `previous` and chains to it
 * (`next.previous_merkle_root === previous.merkle_root`). Only the link:
 * verify each snapshot's signature with verifySnapshot. Never throws.
 */
export function verifySnapshotChain(previous: unknown, next: unknown): SnapshotChainVerification {
  if (!isJsonObject(previous) || !isJsonObject(next))
    return { valid: false, reason: 'malformed', message: 'expected two snapshot objects' };
  const a = parseDate(previous['date']),
    b = parseDate(next['date']);
  if (a === null || b === null) return { valid: false, reason: 'malformed', message: 'date: expected YYYY-MM-DD' };
  if (b - a !== DAY_MS) {
    return { valid: false, reason: 'not_consecutive', message: `${String(next['date'])} is not the day after ${String(previous['date'])}` };
  }
  if (typeof previous['merkle_root'] !== 'string' || next['previous_merkle_root'] !== previous['merkle_root']) {
    return {
      valid: false,
      reason: 'root_mismatch',
      message: `previous_merkle_root of ${String(next['date'])} is not the merkle_root of ${String(previous['date'])}`,
    };
  }
  return { valid: true, reason: null };
}

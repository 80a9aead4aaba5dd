import { isCalendarDate } from '../../lib/dates.js';

/**
 * The anchor: the I/O seam through which the daily audit snapshot's Merkle root is published on an
 * external chain (docs/audit.md). A snapshot is served only once anchored, and a
 * real chain confirms some time after a transaction is sent, so anchoring is two steps: `submit`
 * returns a handle at once, and `confirm` is polled with it until the receipt is final.
 *
 * Contract, for every implementation:
 *
 * 1. `submit` publishes `merkleRoot` for `date` and resolves with the transaction hash once the
 *    chain (or its node) has accepted the transaction. It is idempotent per (date, root) where the
 *    chain allows it: a second call for the same pair returns the same hash rather than publishing
 *    again. Where it cannot be (an EVM anchor restarted between the two calls), a second
 *    transaction with the same payload is harmless: each is a valid anchor of the same root.
 * 2. `confirm` resolves with the receipt once the transaction is final by the anchor's rule (the
 *    configured number of confirmations), and with null while it is pending. It never publishes.
 * 3. Errors are AnchorError with a closed set of codes (below); any other exception is a bug.
 *    Malformed arguments (a date that is not YYYY-MM-DD, a root that is not 64 lowercase hex
 *    characters) are programming errors and throw TypeError before any I/O.
 * 4. The caller persists the hash returned by `submit` before relying on it, and after `dropped` or
 *    `reverted` calls `submit` again, which then publishes a new transaction.
 */
export interface Anchor {
  /** Stable name of the chain, stored in the snapshot's `anchors[].chain` ("sandbox", "ethereum-sepolia"). */
  readonly chain: string;
  /** Publishes the 32-byte root; returns a handle (the transaction hash) to confirm later. */
  submit(input: AnchorInput): Promise<{ tx_hash: string }>;
  /** The receipt once the transaction is confirmed, null while pending; throws AnchorError when it failed or was dropped. */
  confirm(txHash: string): Promise<AnchorReceipt | null>;
}

/** One item of AuditSnapshot.anchors (docs/audit.md#anchoring). */
export interface AnchorReceipt {
  chain: string;
  tx_hash: string;
  block_height: number;
}

export interface AnchorInput {
  /** The snapshot's UTC day, YYYY-MM-DD. */
  readonly date: string;
  /** The snapshot's `merkle_root`: SHA-256, 64 lowercase hex characters, no prefix. */
  readonly merkleRoot: string;
}

/**
 * - `unavailable`: the chain could not be reached or gave no usable answer; nothing is known to have
 *   changed. Retry later with the same arguments.
 * - `reverted`: the chain executed the transaction and it failed (or would fail, found while
 *   estimating gas). Retrying unchanged fails again; check the target address.
 * - `dropped`: the chain no longer knows the transaction (evicted from the mempool, replaced). Submit
 *   again.
 * - `misconfigured`: an operator must act: a malformed key, URL or address, a node on another chain,
 *   an account without funds for gas. Retrying unchanged does not help.
 */
export type AnchorErrorCode = 'unavailable' | 'reverted' | 'dropped' | 'misconfigured';

export class AnchorError extends Error {
  readonly code: AnchorErrorCode;
  /** The anchor's chain name. */
  readonly chain: string;
  /** The transaction concerned, when there is one. */
  readonly txHash: string | undefined;

  constructor(code: AnchorErrorCode, chain: string, message: string, options: { txHash?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AnchorError';
    this.code = code;
    this.chain = chain;
    this.txHash = options.txHash;
  }
}

const ROOT = /^[0-9a-f]{64}$/;

/** Throws TypeError unless `input` is a valid date and root (contract point 3). */
export function assertAnchorInput(input: AnchorInput): void {
  if (typeof input.date !== 'string' || !isCalendarDate(input.date)) {
    throw new TypeError(`anchor date must be a calendar day as YYYY-MM-DD (got ${JSON.stringify(input.date)})`);
  }
  if (typeof input.merkleRoot !== 'string' || !ROOT.test(input.merkleRoot)) {
    throw new TypeError('anchor merkleRoot must be 64 lowercase hex characters');
  }
}

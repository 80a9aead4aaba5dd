import { createHash } from 'node:crypto';
import { AnchorError, assertAnchorInput } from './anchor.js';
import type { Anchor, AnchorInput, AnchorReceipt } from './anchor.js';

/**
 * The default anchor in sandbox mode: local, deterministic, no network. It proves nothing to a third
 * party; it exists so that the snapshot pipeline (submit, confirm, serve) runs end to end without a
 * chain.
 *
 * - tx_hash is the lowercase hex SHA-256 of `sandbox-anchor:${date}:${merkleRoot}` (UTF-8), so the
 *   same (date, root) gives the same hash in every process, which makes `submit` idempotent.
 * - block_height is the number of days from 1970-01-01 to `date` (2026-11-22 is 20779): a function
 *   of the date alone, increasing day by day, and never negative for a real snapshot.
 * - A submitted transaction is confirmed at once.
 *
 * The hash cannot be reversed into its date, so `confirm` knows only the hashes this instance
 * issued. A hash it does not know (the process restarted between the two steps) is reported as
 * `dropped`; the caller submits again and gets the same hash back, confirmed.
 */
export class SandboxAnchor implements Anchor {
  readonly chain = 'sandbox';
  readonly #heights = new Map<string, number>();

  async submit(input: AnchorInput): Promise<{ tx_hash: string }> {
    assertAnchorInput(input);
    const tx_hash = sandboxTxHash(input);
    this.#heights.set(tx_hash, sandboxBlockHeight(input.date));
    return { tx_hash };
  }

  async confirm(txHash: string): Promise<AnchorReceipt | null> {
    const block_height = this.#heights.get(txHash);
    if (block_height === undefined) {
      throw new AnchorError('dropped', this.chain, `sandbox transaction ${txHash} is unknown to this process; submit again`, { txHash });
    }
    return { chain: this.chain, tx_hash: txHash, block_height };
  }
}

export function sandboxTxHash(input: AnchorInput): string {
  return createHash('sha256').update(`sandbox-anchor:${input.date}:${input.merkleRoot}`, 'utf8').digest('hex');
}

/** Days since 1970-01-01; `date` is a valid YYYY-MM-DD (checked by the caller). */
export function sandboxBlockHeight(date: string): number {
  return Math.round(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
}

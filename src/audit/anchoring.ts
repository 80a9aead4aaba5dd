import type { FastifyBaseLogger } from 'fastify';
import { recordEvent } from '../events/event.service.js';
import { isoSeconds, type Clock } from '../lib/clock.js';
import type { KeyRing } from '../keys/key-ring.js';
import { signDocument } from '../kyc/signing.js';
import type { Transact } from '../storage/database.js';
import { AnchorError, type Anchor } from './anchors/anchor.js';
import { updateHeld } from './audit.repository.js';
import type { AuditSnapshotRow } from './audit.table.js';
import { ANCHOR_POLL_MS, anchorRetryDelay } from './core/retry.js';
import { toSnapshot } from './audit.mapping.js';

export interface AnchoringDeps {
  readonly transact: Transact;
  readonly keys: KeyRing;
  readonly anchor: Anchor;
  readonly clock: Clock;
  /** This process, in leases. */
  readonly owner: string;
  readonly livemode: boolean;
  readonly random: () => number;
  readonly log: FastifyBaseLogger;
}

/**
 * Anchoring a built snapshot: its root is submitted to the anchor (the hash persisted before it is
 * relied on), then the receipt is polled. On the receipt the snapshot is signed (anchored_at is a
 * signed member), served, and `audit.snapshot` is emitted, in one transaction and once. A failure
 * waits for the retry schedule (core/retry.ts); a dropped or reverted transaction is submitted again.
 */
export class SnapshotAnchoring {
  readonly #deps: AnchoringDeps;

  constructor(deps: AnchoringDeps) {
    this.#deps = deps;
  }

  /**
   * One step of `row` (claimed under this process's lease) towards anchored: submits its root, or
   * polls the receipt of the root submitted; returns the state it is left in.
   */
  async step(row: AuditSnapshotRow): Promise<AuditSnapshotRow['state']> {
    const { date } = row;
    const merkleRoot = row.merkle_root!;
    let state = row.state;
    let txHash = row.anchor_chain === this.#deps.anchor.chain ? row.anchor_tx_hash : null;
    try {
      if (txHash === null) {
        txHash = (await this.#deps.anchor.submit({ date, merkleRoot })).tx_hash;
        const at = this.#deps.clock.now().getTime();
        // The hash is persisted before it is relied on (Anchor contract, point 4).
        const kept = await this.#deps.transact((trx) =>
          updateHeld(trx, date, state, this.#deps.owner, {
            state: 'submitted',
            anchor_chain: this.#deps.anchor.chain,
            anchor_tx_hash: txHash,
            anchor_error: null,
            updated_at: at,
          }),
        );
        if (!kept) return state;
        state = 'submitted';
      }
      const receipt = await this.#deps.anchor.confirm(txHash);
      const at = this.#deps.clock.now().getTime();
      if (receipt === null) {
        await this.#deps.transact((trx) =>
          updateHeld(trx, date, state, this.#deps.owner, {
            next_anchor_at: at + ANCHOR_POLL_MS,
            lease_owner: null,
            lease_until: 0,
            updated_at: at,
          }),
        );
        return state;
      }
      // Outside the transaction, so that a key past its planned end is rotated before it seals the day
      // (KeyRing.current): read inside, it would be used as it is.
      await this.#deps.keys.current('attestation');
      const served = await this.#deps.transact(async (trx) => {
        const anchoredAt = Math.floor(at / 1000) * 1000;
        const key = await this.#deps.keys.current('attestation', trx);
        const signed = signDocument(
          {
            date,
            merkle_root: merkleRoot,
            count: row.count!,
            anchored_at: isoSeconds(anchoredAt),
            previous_merkle_root: row.previous_merkle_root,
            key_id: key.id,
          },
          key,
        );
        const moved = await updateHeld(trx, date, 'submitted', this.#deps.owner, {
          state: 'anchored',
          anchor_block_height: receipt.block_height,
          anchor_tx_hash: receipt.tx_hash,
          anchored_at: anchoredAt,
          key_id: key.id,
          signature: signed.signature,
          next_anchor_at: null,
          anchor_error: null,
          lease_owner: null,
          lease_until: 0,
          updated_at: at,
        });
        if (!moved) return undefined;
        const snapshot = toSnapshot({
          ...row,
          anchor_chain: receipt.chain,
          anchor_tx_hash: receipt.tx_hash,
          anchor_block_height: receipt.block_height,
          anchored_at: anchoredAt,
          key_id: key.id,
          signature: signed.signature,
        });
        await recordEvent(trx, {
          clientId: null,
          type: 'audit.snapshot',
          data: snapshot,
          livemode: this.#deps.livemode,
          at: new Date(at),
        });
        return snapshot;
      });
      if (served === undefined) return state;
      this.#deps.log.info(
        { date, chain: receipt.chain, tx_hash: receipt.tx_hash, block_height: receipt.block_height },
        'audit snapshot anchored',
      );
      return 'anchored';
    } catch (error) {
      const at = this.#deps.clock.now().getTime();
      const failures = row.anchor_attempts + 1;
      const resubmit = error instanceof AnchorError && (error.code === 'dropped' || error.code === 'reverted');
      const message = error instanceof Error ? error.message.slice(0, 500) : String(error);
      this.#deps.log[error instanceof AnchorError && error.code !== 'misconfigured' ? 'warn' : 'error'](
        { err: error, date, failures },
        'audit snapshot anchoring failed',
      );
      await this.#deps.transact((trx) =>
        updateHeld(trx, date, state, this.#deps.owner, {
          ...(resubmit ? { state: 'built' as const, anchor_tx_hash: null } : {}),
          anchor_attempts: failures,
          anchor_error: message,
          // A dropped transaction is resubmitted at once; other failures wait for the schedule.
          next_anchor_at:
            error instanceof AnchorError && error.code === 'dropped' ? at : at + anchorRetryDelay(failures, this.#deps.random()),
          lease_owner: null,
          lease_until: 0,
          updated_at: at,
        }),
      );
      return resubmit ? 'built' : state;
    }
  }
}

import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/schema.js';
import { commitReceived } from '../fix.repository.js';
import { InboundSequence } from '../inbound-sequence.js';
import type { PartnerMessage } from '../partner-message.js';
import { MAX_BATCH, type SessionStorage } from './outbound-queue.js';

/** Applies a partner's message in `trx` (which also commits the partner's sequence number); returns what to do once committed. */
export type ApplyInbound = (trx: Kysely<Database>, message: PartnerMessage) => Promise<(() => void) | undefined>;

/**
 * The partner's messages, applied one after another in the order received: the partner's sequence
 * number is committed in the transaction that applies them, and never past a gap (InboundSequence).
 * When applying fails, nothing after it is applied, so nothing is committed past it: the next
 * connection starts from the sequence number committed before, and asks the partner again.
 */
export class InboundQueue {
  readonly #storage: SessionStorage;
  readonly #apply: ApplyInbound;
  readonly #fail: (error: unknown) => void;
  readonly #inbound: InboundSequence;
  #chain: Promise<void> = Promise.resolve();
  /** Received and not yet applied, in order: each with what it does to the partner's sequence number. */
  readonly #pending: { effect: (inbound: InboundSequence) => void; message: PartnerMessage | null }[] = [];
  /** Set when applying a message failed: nothing after it is applied, so nothing is committed past it. */
  #failed = false;

  constructor(storage: SessionStorage, nextTargetSeq: number, apply: ApplyInbound, fail: (error: unknown) => void) {
    this.#storage = storage;
    this.#apply = apply;
    this.#fail = fail;
    this.#inbound = new InboundSequence(nextTargetSeq);
  }

  /** A message received (null: a session message, which only moves the sequence number), to apply after those before it. */
  push(effect: (inbound: InboundSequence) => void, message: PartnerMessage | null): void {
    this.#pending.push({ effect, message });
    this.#chain = this.#chain
      .then(() => (this.#failed ? undefined : this.#applyPending()))
      .catch((error: unknown) => {
        // The next connection starts from the sequence number committed before this message, and
        // asks the partner for it again.
        this.#failed = true;
        this.#fail(error);
      });
  }

  /** Resolves once every message received has been applied (or applying failed). */
  async settled(): Promise<void> {
    await this.#chain;
  }

  /**
   * Applies the partner's messages received so far, in order, in one transaction that also commits
   * the partner's sequence number past them (never past a gap). Messages that arrive together (the
   * answers to orders handed over together) cost one durable commit.
   */
  async #applyPending(): Promise<void> {
    const batch = this.#pending.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    const before = this.#inbound.next;
    for (const { effect } of batch) effect(this.#inbound);
    const next = this.#inbound.next;
    const messages = batch.map((b) => b.message).filter((m): m is PartnerMessage => m !== null);
    if (messages.length === 0 && next === before) return;
    const now = this.#storage.clock.now().getTime();
    const after = await this.#storage.transact(async (trx) => {
      const then: ((() => void) | undefined)[] = [];
      for (const message of messages) then.push(await this.#apply(trx, message));
      await commitReceived(trx, this.#storage.partnerId, next, now);
      return then;
    });
    for (const done of after) done?.();
  }
}

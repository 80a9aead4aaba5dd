import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/schema.js';
import { commitReceived } from '../fix.repository.js';
import { InboundSequence } from '../inbound-sequence.js';
import type { PartnerMessage } from '../partner-message.js';
import { MAX_BATCH, type SessionStorage } from './outbound-queue.js';

/** Applies a partner's message in `trx` (which also commits the partner's sequence number); returns what to do once committed. */
export type ApplyInbound = (trx: Kysely<Database>, message: PartnerMessage) => Promise<(() => void) | undefined>;

/**
 * What a message received does to the partner's sequence: `message` is its number arriving (with the
 * application's message, or null for a session message), `gap_fill` a SequenceReset-GapFill, `reset`
 * a SequenceReset-Reset or a Logon that resets.
 */
export type Received =
  | { readonly kind: 'message'; readonly seq: number; readonly message: PartnerMessage | null }
  | { readonly kind: 'gap_fill'; readonly seq: number; readonly newSeqNo: number }
  | { readonly kind: 'reset'; readonly newSeqNo: number };

/**
 * The partner's messages, applied one after another in sequence order: one that arrives beyond a
 * gap is held until the gap is filled (InboundSequence). The partner's sequence number is committed
 * in the transaction that applies them, and never past a gap or a message not yet applied. When
 * applying fails, nothing after it is applied, so nothing is committed past it: the next connection
 * starts from the sequence number committed before, and asks the partner again.
 */
export class InboundQueue {
  readonly #storage: SessionStorage;
  readonly #apply: ApplyInbound;
  readonly #fail: (error: unknown) => void;
  readonly #inbound: InboundSequence<PartnerMessage>;
  #chain: Promise<void> = Promise.resolve();
  /** Received and not yet dealt with, in the order received. */
  readonly #pending: Received[] = [];
  /** Set when applying a message failed: nothing after it is applied, so nothing is committed past it. */
  #failed = false;

  constructor(storage: SessionStorage, nextTargetSeq: number, apply: ApplyInbound, fail: (error: unknown) => void) {
    this.#storage = storage;
    this.#apply = apply;
    this.#fail = fail;
    this.#inbound = new InboundSequence(nextTargetSeq);
  }

  /** A message received, dealt with after those received before it. */
  push(received: Received): void {
    this.#pending.push(received);
    this.#chain = this.#chain
      .then(() => (this.#failed ? undefined : this.#applyPending()))
      .catch((error: unknown) => {
        // The next connection starts from the sequence number committed before this message, and
        // asks the partner for it again.
        this.#failed = true;
        this.#fail(error);
      });
  }

  /**
   * The numbers missing before the first message held beyond a gap, and how many are held (null:
   * nothing is held). Reflects what has been dealt with so far.
   */
  openGap(): { begin: number; end: number; held: number } | null {
    const gap = this.#inbound.openGap();
    return gap === null ? null : { ...gap, held: this.#inbound.held };
  }

  /** Resolves once every message received has been dealt with (or applying failed). */
  async settled(): Promise<void> {
    await this.#chain;
  }

  /**
   * Applies the partner's messages received so far that are due, in sequence order, in one
   * transaction that also commits the partner's sequence number past them (never past a gap).
   * Messages that arrive together (the answers to orders handed over together) cost one durable commit.
   */
  async #applyPending(): Promise<void> {
    const batch = this.#pending.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    const before = this.#inbound.next;
    const messages: PartnerMessage[] = [];
    for (const received of batch) messages.push(...this.#deal(received));
    const next = this.#inbound.next;
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

  /** What `received` does to the sequence: the messages it makes due. */
  #deal(received: Received): PartnerMessage[] {
    switch (received.kind) {
      case 'message':
        return this.#inbound.receive(received.seq, received.message);
      case 'gap_fill':
        return this.#inbound.gapFill(received.seq, received.newSeqNo);
      case 'reset':
        return this.#inbound.reset(received.newSeqNo);
    }
  }
}

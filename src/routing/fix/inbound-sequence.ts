/**
 * Which of the partner's sequence numbers have been dealt with, and so the `next_target_seq` that is
 * safe to commit: the lowest number not yet dealt with. A message that arrives beyond a gap is
 * applied at once, but the committed number stays below the gap until the gap is filled (the
 * partner's resends, or a SequenceReset-GapFill). After a crash the session then asks again for
 * everything from the gap on, and what was applied twice is recognised by its ExecID. Committing the
 * highest number seen instead would lose the gap's messages for good.
 */
export class InboundSequence {
  #next: number;
  readonly #above = new Set<number>();

  /** `next`: the committed next_target_seq. */
  constructor(next: number) {
    this.#next = next;
  }

  /** The lowest sequence number not yet dealt with. */
  get next(): number {
    return this.#next;
  }

  /** Message `seq` has been dealt with (applied, or needed nothing). */
  done(seq: number): void {
    if (seq < this.#next) return;
    this.#above.add(seq);
    this.#advance();
  }

  /** SequenceReset-GapFill (123=Y) with MsgSeqNum `seq`: `seq` up to `newSeqNo - 1` need nothing. */
  gapFill(seq: number, newSeqNo: number): void {
    for (let n = Math.max(seq, this.#next); n < newSeqNo; n++) this.#above.add(n);
    this.#advance();
  }

  /** SequenceReset-Reset (123=N): the partner's next message is `newSeqNo`, whatever came before. */
  reset(newSeqNo: number): void {
    this.#next = newSeqNo;
    for (const n of this.#above) if (n < newSeqNo) this.#above.delete(n);
    this.#advance();
  }

  #advance(): void {
    while (this.#above.delete(this.#next)) this.#next += 1;
  }
}

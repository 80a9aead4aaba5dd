/**
 * The partner's messages in sequence order, and the `next_target_seq` that is safe to commit: the
 * lowest number not yet dealt with. An application message that arrives beyond a gap is held, not
 * applied: it is handed out for applying once every number before it has been dealt with (the
 * partner's resends, or a SequenceReset-GapFill over its session messages). The committed number
 * never moves past a message not yet applied, so a crash while a message is held loses nothing: the
 * next logon starts from the committed number and the partner sends everything from the gap on
 * again. Applying a message at once would let a later report (a Canceled) close the order before the
 * earlier one it follows (a Trade) is applied.
 *
 * `T` is the application's message; null stands for a session message, which only takes its number.
 */
export class InboundSequence<T> {
  #next: number;
  /** Numbers at or beyond `next` dealt with (session messages, gap fills) but not yet reached. */
  readonly #above = new Set<number>();
  /** Application messages beyond a gap, by number, waiting for the gap to be filled. */
  readonly #held = new Map<number, T>();

  /** `next`: the committed next_target_seq. */
  constructor(next: number) {
    this.#next = next;
  }

  /** The lowest sequence number not yet dealt with: the one to commit. */
  get next(): number {
    return this.#next;
  }

  /** How many application messages wait beyond a gap. */
  get held(): number {
    return this.#held.size;
  }

  /**
   * The numbers missing before the first number received beyond them: a held message, or a session
   * message (a Logon or a Heartbeat numbered past a gap holds nothing back, but the gap is as open).
   * Null when nothing beyond `next` has arrived.
   */
  openGap(): { begin: number; end: number } | null {
    if (this.#held.size === 0 && this.#above.size === 0) return null;
    return { begin: this.#next, end: Math.min(...this.#held.keys(), ...this.#above) - 1 };
  }

  /**
   * Message `seq` arrived (`message` null: a session message, or one answered with a Reject, whose
   * number is dealt with by arriving). Returns the application messages to apply now, in order: a
   * message below `next` (a copy of one dealt with, which the application recognises), or the
   * message at `next` and the held ones it lets through. A message beyond a gap returns nothing: it
   * is held (a second copy of a held message is dropped: the first is applied in its turn).
   */
  receive(seq: number, message: T | null): T[] {
    if (seq < this.#next) return message === null ? [] : [message];
    if (message === null) this.#above.add(seq);
    else if (!this.#held.has(seq)) this.#held.set(seq, message);
    return this.#advance();
  }

  /** SequenceReset-GapFill (123=Y) with MsgSeqNum `seq`: `seq` up to `newSeqNo - 1` need nothing. */
  gapFill(seq: number, newSeqNo: number): T[] {
    for (let n = Math.max(seq, this.#next); n < newSeqNo; n++) if (!this.#held.has(n)) this.#above.add(n);
    return this.#advance();
  }

  /**
   * SequenceReset-Reset (123=N), or a Logon that resets: the partner's next message is `newSeqNo`,
   * whatever came before. Messages held below it were received all the same: they are applied, in order.
   */
  reset(newSeqNo: number): T[] {
    const released: T[] = [];
    for (const seq of [...this.#held.keys()].sort((a, b) => a - b)) {
      if (seq >= newSeqNo) break;
      released.push(this.#held.get(seq) as T);
      this.#held.delete(seq);
    }
    this.#next = newSeqNo;
    for (const n of this.#above) if (n < newSeqNo) this.#above.delete(n);
    return [...released, ...this.#advance()];
  }

  #advance(): T[] {
    const ready: T[] = [];
    for (;;) {
      const message = this.#held.get(this.#next);
      if (message !== undefined) {
        this.#held.delete(this.#next);
        ready.push(message);
      } else if (!this.#above.delete(this.#next)) break;
      this.#next += 1;
    }
    return ready;
  }
}

/**
 * A binary min-heap of (time, item): the items due first come out first, ties in insertion order.
 * Entries are not removed when an item's time changes; the caller skips the stale ones it pops.
 */
export class WakeQueue<T> {
  readonly #heap: { at: number; seq: number; item: T }[] = [];
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  push(at: number, item: T): void {
    const heap = this.#heap;
    heap.push({ at, seq: this.#seq++, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The earliest time queued, or Infinity when empty. */
  peekAt(): number {
    return this.#heap[0]?.at ?? Number.POSITIVE_INFINITY;
  }

  pop(): { at: number; item: T } | undefined {
    const heap = this.#heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return { at: top.at, item: top.item };
  }
}

function before(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

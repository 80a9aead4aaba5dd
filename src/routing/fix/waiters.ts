/**
 * Callers waiting for the partner's answer about an order, resolved once the answer is committed.
 * A waiter gives up after `timeoutMs` with the error `onTimeout` makes: the answer then reaches the
 * router through the report log.
 */
export class Waiters<T> {
  readonly #waiting = new Map<string, Set<(value: T) => void>>();

  wait(key: string, timeoutMs: number, onTimeout: () => Error): { promise: Promise<T>; cancel: () => void } {
    let entry: (value: T) => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const cancel = () => {
      clearTimeout(timer);
      const set = this.#waiting.get(key);
      set?.delete(entry);
      if (set?.size === 0) this.#waiting.delete(key);
    };
    const promise = new Promise<T>((resolve, reject) => {
      entry = (value: T) => {
        cancel();
        resolve(value);
      };
      timer = setTimeout(() => {
        cancel();
        reject(onTimeout());
      }, timeoutMs);
    });
    const set = this.#waiting.get(key) ?? new Set();
    set.add(entry);
    this.#waiting.set(key, set);
    return { promise, cancel };
  }

  resolve(key: string, value: T): void {
    for (const entry of [...(this.#waiting.get(key) ?? [])]) entry(value);
  }
}

/** Runs `work` for one key at a time: a second call for the same key waits for the first. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/** One page of a list: its items and the opaque cursors from `X-Cursor-Next` / `X-Cursor-Prev`. */
export interface Page<T> {
  data: T[];
  /** Null on the last page (the service sends an empty header). */
  nextCursor: string | null;
  /** Null on the first page, and on lists that do not page backwards. */
  prevCursor: string | null;
}

/**
 * A list that follows `X-Cursor-Next` until it is empty. Iterate it for items
 * (`for await (const order of client.orders.list())`) or call `pages()` for whole pages. Nothing is
 * fetched until iteration starts, and each page is fetched only when the previous one is consumed.
 * Every iteration starts again from the first page.
 */
export class Paginator<T> implements AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<T>>;

  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {
    this.#fetchPage = fetchPage;
  }

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.#fetchPage(cursor);
      yield page;
      if (page.nextCursor === null) return;
      // A server that hands back the cursor it was given would loop forever; stop loudly instead.
      if (page.nextCursor === cursor) throw new Error(`pagination did not advance: cursor ${cursor} returned again`);
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, in order; for lists known to be small. */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}

/** A cursor header as the service sends it: absent or empty means "no further page". */
export function cursorFrom(header: string | null): string | null {
  return header === null || header === '' ? null : header;
}

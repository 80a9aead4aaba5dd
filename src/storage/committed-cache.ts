/**
 * Values read from the database, kept only while the storage's change marker is unchanged (see
 * Storage.changeMarker). On SQLite any commit, by this process or another sharing the file, changes
 * the marker and so empties the cache: nothing read here can be older than the last commit. Without
 * a marker (PostgreSQL) nothing is kept and every lookup reads the database.
 */
export class CommittedCache<K, V> {
  #marker: number | null = null;
  #values = new Map<K, V>();

  constructor(
    private readonly changeMarker: () => number | null,
    /** Entries beyond this many are not kept (the cache empties at the next commit anyway). */
    private readonly limit = 10_000,
  ) {}

  /** The value kept for `key` under the current marker; undefined when there is none. */
  peek(key: K): V | undefined {
    const marker = this.changeMarker();
    return marker !== null && marker === this.#marker ? this.#values.get(key) : undefined;
  }

  /**
   * The value kept for `key`, or `read()`'s answer, kept when `keep` accepts it and nothing committed
   * while it was being read.
   */
  async get(key: K, read: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const marker = this.changeMarker();
    if (marker === null) return read();
    if (marker !== this.#marker) {
      this.#marker = marker;
      this.#values.clear();
    } else if (this.#values.has(key)) {
      return this.#values.get(key) as V;
    }
    const value = await read();
    if (keep(value) && this.#values.size < this.limit && this.changeMarker() === marker) this.#values.set(key, value);
    return value;
  }
}

import pg from 'pg';

/** The channel the database announces changes of kept tables on (migration 2026-11-26T04-00). */
export const CHANGES_CHANNEL = 'cauri_changes';

/** How long to wait before listening again after the listening connection was lost. */
const RECONNECT_MS = 1_000;

/**
 * PostgreSQL's change marker (Storage.changeMarker): a number that changes whenever the database
 * announces, on `cauri_changes`, that a table whose rows processes keep in memory changed (the
 * clients and their secrets; a trigger sends it after the change commits, whichever process made
 * it), and whenever this process itself changed one (`touched`, at once, before the announcement
 * comes back). While the listening connection is down the marker is null, so nothing is kept.
 */
export class ChangeListener {
  #marker: number | null = null;
  #client: pg.Client | null = null;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  get marker(): number | null {
    return this.#marker;
  }

  /** This process changed a kept table. */
  touched(): void {
    if (this.#marker !== null) this.#marker++;
  }

  async start(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on('notification', () => this.touched());
    const lost = (): void => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#marker = null;
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      if (!this.#closed) this.#timer = setTimeout(() => void this.start().catch(lost), RECONNECT_MS);
    };
    client.on('error', lost);
    client.on('end', lost);
    this.#client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      lost();
      throw error;
    }
    // A new marker: whatever was kept before the connection was (re)established may be stale.
    this.#marker = Date.now();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    this.#marker = null;
    if (client !== null) await client.end().catch(() => undefined);
  }
}

import type { Kysely } from 'kysely';
import { clientState } from '../auth/client.repository.js';
import { clientAcceptsToken } from '../auth/client.service.js';
import type { Clock } from '../lib/clock.js';
import type { Database } from '../storage/schema.js';
import { serializeEnvelope } from '../events/envelope.js';
import { envelopeOf } from '../events/event.service.js';
import { lastEventIdAt, SSE_PING, sseEvent } from './sse.js';
import { clientEventsBetween } from './stream.repository.js';

export interface FollowOptions {
  /** Pause between two reads of the events table when nothing new was found. */
  pollIntervalMs: number;
  /** A `: ping` comment is sent after this long without any write. */
  heartbeatMs: number;
  /**
   * Events are sent once their id's time is at least this old. Ids are taken from the clock when a
   * use case starts, and its transaction commits a little later, so an event with a smaller id can
   * become visible after one with a larger id. Reading only ids older than this window keeps the
   * stream in id order with no gap, which is what makes `Last-Event-ID` resumption exact, provided no
   * transaction that records an event stays open longer than the window.
   */
  settleMs: number;
  /** Rows read per query. */
  batch: number;
}

export const DEFAULT_FOLLOW_OPTIONS: FollowOptions = { pollIntervalMs: 400, heartbeatMs: 15_000, settleMs: 2_000, batch: 100 };

/** Where the stream writes: a Node response, seen through the few members used. */
export interface SseSink {
  write(chunk: string): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed: boolean;
}

/**
 * Follows one client's events for one SSE connection by polling the events table, so that any API
 * process sees the events every other process records, with no broker. It replays the stored events
 * after `after` first, then keeps reading. It ends when `stop()` is called (client gone, server
 * closing), when the access token expires (the client reconnects with a new one and resumes), or
 * when the client is disabled.
 */
export class EventFollower {
  #stopped = false;
  #wake: (() => void) | null = null;
  #done: Promise<void> | null = null;
  #lastWrite = 0;
  #lastStatusCheck = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly sink: SseSink,
    private readonly clientId: string,
    private cursor: string,
    /** Unix milliseconds after which the stream ends (the access token's expiry). */
    private readonly endsAt: number,
    /** The access token's `iat` (Unix seconds): the stream ends if the client was disabled since. */
    private readonly issuedAt: number,
    private readonly options: FollowOptions,
  ) {}

  /** Runs until stopped; never rejects (a failed read ends the stream, and the client resumes). */
  start(onError: (error: unknown) => void): Promise<void> {
    this.#done ??= this.#run().catch((error: unknown) => {
      if (!this.#stopped) onError(error);
    });
    return this.#done;
  }

  /** Stops the loop and waits until it no longer touches the database. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#done;
  }

  get stopped(): boolean {
    return this.#stopped || this.sink.destroyed;
  }

  async #run(): Promise<void> {
    this.#lastWrite = Date.now();
    this.#lastStatusCheck = Date.now();
    while (!this.stopped) {
      const now = this.clock.now().getTime();
      if (now >= this.endsAt) return;
      const rows = await this.#read(now);
      for (const row of rows) {
        if (this.stopped) return;
        const body = serializeEnvelope(envelopeOf(row));
        await this.#write(sseEvent(row.id, row.type, body));
        this.cursor = row.id;
      }
      if (rows.length === this.options.batch) continue;
      if (Date.now() - this.#lastStatusCheck >= this.options.heartbeatMs) {
        // Disabling a client stops its tokens for good; an open stream notices within a heartbeat,
        // also when the client was enabled again meanwhile.
        this.#lastStatusCheck = Date.now();
        if (!clientAcceptsToken(await clientState(this.db, this.clientId), this.issuedAt)) return;
      }
      if (Date.now() - this.#lastWrite >= this.options.heartbeatMs) await this.#write(SSE_PING);
      await this.#sleep(Math.min(this.options.pollIntervalMs, Math.max(0, this.endsAt - now)));
    }
  }

  #read(now: number) {
    return clientEventsBetween(this.db, this.clientId, this.cursor, lastEventIdAt(now - this.options.settleMs), this.options.batch);
  }

  async #write(chunk: string): Promise<void> {
    this.#lastWrite = Date.now();
    if (this.sink.write(chunk) || this.stopped) return;
    // A slow reader: wait for its buffer to drain (or for it to go) before reading more rows.
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      this.sink.once('drain', resolve);
      this.sink.once('close', resolve);
    });
    this.#wake = null;
  }

  #sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = null;
        done();
      };
    });
  }
}

import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Database } from '../storage/schema.js';
import { MarketCalendar } from './calendar.js';
import { loadMarketCalendar } from './calendar.service.js';
import { EXCHANGES } from './exchanges.js';

/** How often a running process reads the calendars again, to see another process's import. */
export const CALENDAR_REFRESH_MS = 60_000;

/**
 * The trading calendar of the process: read from the database once, then kept in memory, so that
 * nothing on the path of an order or a clock reads it. `reload()` reads it again (the command line
 * does after an import); a running service also reloads every CALENDAR_REFRESH_MS once `start()`ed,
 * so an import made by `cauri calendars import` reaches every process within a minute, or at once on
 * restart. A failed reload keeps the calendar it had.
 */
export class CalendarCache {
  #current = new MarketCalendar([]);
  #timer: ReturnType<typeof setInterval> | undefined;
  #gaps = '';
  #reloads = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  current(): MarketCalendar {
    return this.#current;
  }

  /**
   * Reads the calendars again. Of reloads that overlap (the periodic one and one asked for), only the
   * last one started replaces the calendar in use: an earlier read that ends later is older data.
   */
  async reload(): Promise<MarketCalendar> {
    const started = ++this.#reloads;
    const calendar = await loadMarketCalendar(this.db);
    if (started === this.#reloads) {
      this.#current = calendar;
      this.#warnOfGaps();
    }
    return calendar;
  }

  start(intervalMs = CALENDAR_REFRESH_MS): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.reload().catch((error: unknown) =>
        this.log.warn({ err: error }, 'market calendars not reloaded; the previous ones stay in use'),
      );
    }, intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * A year the data lacks follows the weekly timetable without holidays: operators are told (once per
   * change) while this year or the next is missing, so that they import it in time.
   */
  #warnOfGaps(): void {
    const year = this.clock.now().getUTCFullYear();
    const missing = EXCHANGES.flatMap((exchange) =>
      [year, year + 1].filter((y) => !this.#current.covers(exchange, y)).map((y) => `${exchange} ${y}`),
    );
    const gaps = missing.join(', ');
    if (gaps !== '' && gaps !== this.#gaps) {
      this.log.warn(
        { missing },
        'market calendars missing: those years follow the weekly timetable without holidays; import them with cauri calendars import',
      );
    }
    this.#gaps = gaps;
  }
}

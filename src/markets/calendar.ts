import { isoSeconds } from '../lib/clock.js';
import { addDays, dateOf, dayStartMs, isCalendarDate } from '../lib/dates.js';
import type { Exchange } from '../partners/markets.js';

/**
 * Trading calendars of the exchanges: which phase an exchange is in at an instant, its open days,
 * the close of a day, the next open and close, and open-day arithmetic (settlement dates). Pure: the
 * calendar is built once from data (loaded from the database by calendar.service.ts) and never
 * reads anything else.
 *
 * Every time is UTC. A day's phases all lie within its UTC day (the exchanges of the region trade
 * between 08:00 and 15:00 UTC), so an instant belongs to the day of its UTC date.
 *
 * Phases are half-open intervals [start, end). An auction published as happening "at" an instant
 * (BRVM's opening auction at 09:45) is a phase whose start equals its end: it is listed in the day's
 * phases, but no instant is inside it, so `phaseAt` reports the phase that begins there (09:45:00 is
 * `continuous`). An auction given as a window (start before end) is reported during that window.
 */

export const PHASES = ['pre_open', 'opening_auction', 'continuous', 'pre_close', 'closing_auction', 'trading_at_last'] as const;
export type Phase = (typeof PHASES)[number];
export type ExchangeCode = Exchange;

/** Phases that may be an instant (start equal to end); every other phase lasts. */
export const AUCTION_PHASES: readonly Phase[] = ['opening_auction', 'closing_auction'];

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A phase of a timetable, as times of day UTC (`HH:MM:SS`). */
export interface PhaseTime {
  name: Phase;
  start: string;
  end: string;
}

/** A day that departs from the weekly timetable: closed (`timetable` null) or on another timetable. */
export interface SpecialDay {
  date: string;
  name: string;
  timetable: string | null;
  /** The date is a projection to be confirmed (Islamic holidays depend on the sighting of the moon). */
  provisional?: boolean;
}

/** One exchange's calendar for one year: named timetables, the weekly pattern, and the exceptions. */
export interface CalendarYear {
  exchange: ExchangeCode;
  year: number;
  /** Where the timetable and holidays come from, for people reading the data. */
  source: string;
  timetables: Readonly<Record<string, readonly PhaseTime[]>>;
  /** The timetable of each weekday; null when the exchange is closed that day of the week. */
  week: Readonly<Record<Weekday, string | null>>;
  days: readonly SpecialDay[];
}

/** A day as the API shows it: phases with full date-times. */
export interface CalendarDay {
  date: string;
  open: boolean;
  phases: { name: Phase; start: string; end: string }[];
}

/**
 * How far the next open, the next close and open-day arithmetic look before giving up: a little over
 * a year, longer than any closure a calendar describes.
 */
export const MAX_SCAN_DAYS = 400;

const TIME_PATTERN = /^([01]\d|2[0-3]):([0-5]\d):([0-5]\d)$/;

/** Whether `value` is a time of day `HH:MM:SS` (00:00:00 to 23:59:59). */
export function isTimeOfDay(value: string): boolean {
  return TIME_PATTERN.test(value);
}

/** Seconds after midnight of a valid `HH:MM:SS`. */
export function secondsOfDay(time: string): number {
  const m = TIME_PATTERN.exec(time);
  if (m === null) throw new RangeError(`not a time of day HH:MM:SS: ${time}`);
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}

function assertDate(date: string): void {
  if (!isCalendarDate(date)) throw new RangeError(`not a date YYYY-MM-DD: ${date}`);
}

/** A phase in seconds of its day. */
interface TimedPhase {
  name: Phase;
  start: number;
  end: number;
}

/** A day's plan: its phases and, from them, its sessions (contiguous spans of lasting phases). */
interface DayPlan {
  phases: readonly TimedPhase[];
  sessions: readonly (readonly [number, number])[];
}

interface CompiledYear {
  /** Indexed like Date.getUTCDay(): 0 is Sunday. */
  week: readonly DayPlan[];
  special: ReadonlyMap<string, DayPlan>;
}

const CLOSED: DayPlan = { phases: [], sessions: [] };

function plan(phases: readonly PhaseTime[]): DayPlan {
  const timed = phases
    .map((p) => ({ name: p.name, start: secondsOfDay(p.start), end: secondsOfDay(p.end) }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const sessions: [number, number][] = [];
  for (const p of timed) {
    if (p.end <= p.start) continue;
    const last = sessions[sessions.length - 1];
    if (last !== undefined && p.start <= last[1]) last[1] = Math.max(last[1], p.end);
    else sessions.push([p.start, p.end]);
  }
  return { phases: timed, sessions };
}

function compile(year: CalendarYear): CompiledYear {
  const plans = new Map<string, DayPlan>();
  const planOf = (name: string | null): DayPlan => {
    if (name === null) return CLOSED;
    const phases = year.timetables[name];
    if (phases === undefined) throw new Error(`${year.exchange} ${year.year}: unknown timetable ${name}`);
    let compiled = plans.get(name);
    if (compiled === undefined) plans.set(name, (compiled = plan(phases)));
    return compiled;
  };
  // Date.getUTCDay() counts from Sunday; the data names Monday first.
  const week = [6, 0, 1, 2, 3, 4, 5].map((i) => planOf(year.week[WEEKDAYS[i] as Weekday]));
  return { week, special: new Map(year.days.map((d) => [d.date, planOf(d.timetable)])) };
}

/**
 * An immutable trading calendar of every exchange. A year the data does not cover follows the weekly
 * timetable of the nearest covered year (the latest earlier one, else the earliest later one),
 * without holidays; an exchange with no data at all is always closed.
 */
export class MarketCalendar {
  readonly years: readonly CalendarYear[];
  readonly #compiled = new Map<ExchangeCode, Map<number, CompiledYear>>();
  /** Years outside the data, built on first use from the nearest covered year. */
  readonly #fallbacks = new Map<string, CompiledYear>();

  constructor(years: readonly CalendarYear[]) {
    this.years = years;
    for (const year of years) {
      let byYear = this.#compiled.get(year.exchange);
      if (byYear === undefined) this.#compiled.set(year.exchange, (byYear = new Map()));
      byYear.set(year.year, compile(year));
    }
  }

  /** Whether the data covers `year` of `exchange` (holidays included). */
  covers(exchange: ExchangeCode, year: number): boolean {
    return this.#compiled.get(exchange)?.has(year) ?? false;
  }

  /** The day as the API shows it: `open` when it has a phase that lasts. */
  day(exchange: ExchangeCode, date: string): CalendarDay {
    const p = this.#plan(exchange, date);
    const start = dayStartMs(date);
    return {
      date,
      open: p.sessions.length > 0,
      phases: p.phases.map((x) => ({ name: x.name, start: isoSeconds(start + x.start * 1000), end: isoSeconds(start + x.end * 1000) })),
    };
  }

  isOpenDay(exchange: ExchangeCode, date: string): boolean {
    return this.#plan(exchange, date).sessions.length > 0;
  }

  /** Epoch ms of the end of the day's last phase (its close); null when the exchange is closed that day. */
  closeOf(exchange: ExchangeCode, date: string): number | null {
    const last = this.#plan(exchange, date).sessions.at(-1);
    return last === undefined ? null : dayStartMs(date) + last[1] * 1000;
  }

  /** The phase at an instant, or `closed` outside every phase (an instant auction is never reported). */
  phaseAt(exchange: ExchangeCode, atMs: number): Phase | 'closed' {
    const date = dateOf(atMs);
    const second = (atMs - dayStartMs(date)) / 1000;
    for (const p of this.#plan(exchange, date).phases) if (p.start <= second && second < p.end) return p.name;
    return 'closed';
  }

  /** Whether the exchange is in session: inside a phase that lasts, pre-open included. */
  isOpen(exchange: ExchangeCode, atMs: number): boolean {
    return this.phaseAt(exchange, atMs) !== 'closed';
  }

  /** The first session start strictly after `atMs` (while in session, the next session's); null if none within MAX_SCAN_DAYS. */
  nextOpen(exchange: ExchangeCode, atMs: number): number | null {
    return this.#nextBoundary(exchange, atMs, 0);
  }

  /** The first session end strictly after `atMs` (while in session, the current session's); null if none within MAX_SCAN_DAYS. */
  nextClose(exchange: ExchangeCode, atMs: number): number | null {
    return this.#nextBoundary(exchange, atMs, 1);
  }

  /**
   * The `n`th open day after `date` (`n` 0 is `date` itself, open or not): a trade of Monday settles
   * on `addOpenDays(exchange, monday, 3)`, skipping weekends and holidays.
   */
  addOpenDays(exchange: ExchangeCode, date: string, n: number): string {
    assertDate(date);
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`open days must be an integer >= 0: ${n}`);
    let day = date;
    for (let counted = 0, closedRun = 0; counted < n; ) {
      day = addDays(day, 1);
      if (this.isOpenDay(exchange, day)) {
        counted++;
        closedRun = 0;
      } else if (++closedRun > MAX_SCAN_DAYS) {
        throw new Error(`${exchange}: no open day in the ${MAX_SCAN_DAYS} days after ${addDays(day, -MAX_SCAN_DAYS)}`);
      }
    }
    return day;
  }

  #nextBoundary(exchange: ExchangeCode, atMs: number, edge: 0 | 1): number | null {
    const first = dateOf(atMs);
    for (let i = 0; i <= MAX_SCAN_DAYS; i++) {
      const date = addDays(first, i);
      const start = dayStartMs(date);
      for (const session of this.#plan(exchange, date).sessions) {
        const at = start + session[edge] * 1000;
        if (at > atMs) return at;
      }
    }
    return null;
  }

  #plan(exchange: ExchangeCode, date: string): DayPlan {
    assertDate(date);
    const year = this.#year(exchange, Number(date.slice(0, 4)));
    if (year === undefined) return CLOSED;
    return year.special.get(date) ?? (year.week[new Date(dayStartMs(date)).getUTCDay()] as DayPlan);
  }

  #year(exchange: ExchangeCode, year: number): CompiledYear | undefined {
    const byYear = this.#compiled.get(exchange);
    if (byYear === undefined) return undefined;
    const exact = byYear.get(year);
    if (exact !== undefined) return exact;
    const key = `${exchange}:${year}`;
    let fallback = this.#fallbacks.get(key);
    if (fallback === undefined) {
      const covered = [...byYear.keys()];
      const earlier = covered.filter((y) => y < year);
      const nearest = earlier.length > 0 ? Math.max(...earlier) : Math.min(...covered);
      fallback = { week: (byYear.get(nearest) as CompiledYear).week, special: new Map() };
      this.#fallbacks.set(key, fallback);
    }
    return fallback;
  }
}

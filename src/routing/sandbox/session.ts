import { addDays, dateOf } from '../../lib/dates.js';
import type { MarketCalendar } from '../../markets/calendar.js';
import { exchangeOfInstrument } from '../../partners/markets.js';

/**
 * When the simulated exchange matches orders (pure): the phases of the instrument's exchange
 * calendar, read as execution windows. Only the auctions and continuous trading execute: pre-open and
 * pre-close take orders without matching them, trading at last executes nothing (an order that
 * reaches the partner then waits for the next session's opening auction), and nothing executes while
 * the exchange is closed.
 *
 * - An auction (opening or closing) executes, at its instant, every waiting order whose limit the
 *   auction price (the simulated price at that instant) crosses, all at that one price. An auction
 *   published as a window uncrosses at the end of the window.
 * - Continuous trading executes at any second of its phase at the moving simulated price.
 */
export interface ExecutionWindow {
  readonly kind: 'auction' | 'continuous';
  /** The first instant of the window at or after the one asked about; an auction's one price is the simulated price then. */
  readonly atMs: number;
  /** The end of the window (exclusive); an auction's is one millisecond after its instant. */
  readonly untilMs: number;
}

export interface SessionRule {
  /** The first window at or after `atMs` in which an order on `instrument` can execute; null if none within the calendar's horizon. */
  next(instrument: string, atMs: number): ExecutionWindow | null;
}

/** How far ahead a window is looked for: longer than any closure of the calendars (a few days). */
const HORIZON_DAYS = 31;

/** The windows of the calendar current when asked (`calendar` is read at each call, so a reload shows). */
export function calendarSessions(calendar: () => MarketCalendar): SessionRule {
  return {
    next(instrument, atMs) {
      const exchange = exchangeOfInstrument(instrument);
      const cal = calendar();
      const first = dateOf(atMs);
      for (let i = 0; i <= HORIZON_DAYS; i++) {
        const window = windowOfDay(cal.day(exchange, addDays(first, i)).phases, atMs);
        if (window !== null) return window;
      }
      return null;
    },
  };
}

/** The first window of a day's phases (in time order) that ends after `atMs`; trading at last is none. */
export function windowOfDay(phases: readonly { name: string; start: string; end: string }[], atMs: number): ExecutionWindow | null {
  for (const phase of phases) {
    const start = Date.parse(phase.start);
    const end = Date.parse(phase.end);
    switch (phase.name) {
      case 'opening_auction':
      case 'closing_auction':
        if (end >= atMs) return { kind: 'auction', atMs: end, untilMs: end + 1 };
        break;
      case 'continuous':
        if (end > atMs) return { kind: 'continuous', atMs: Math.max(start, atMs), untilMs: end };
        break;
      default:
        break;
    }
  }
  return null;
}

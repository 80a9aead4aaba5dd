import { addDays, dateOf } from '../../lib/dates.js';
import type { MarketCalendar } from '../../markets/calendar.js';
import { exchangeOfInstrument } from '../../partners/markets.js';

/**
 * When the simulated exchange matches orders (pure): the phases of the instrument's exchange
 * calendar, read as execution windows. Pre-open and pre-close take orders without matching them, and
 * nothing executes while the exchange is closed.
 *
 * - An auction (opening or closing) executes, at its instant, every waiting order whose limit the
 *   auction price crosses, all at that one price. An auction published as a window uncrosses at the
 *   end of the window.
 * - Continuous trading executes at any second of its phase at the moving simulated price.
 * - Trading at last executes at the closing price only: the simulated price at the start of the phase
 *   (the instant of the closing auction), for the whole phase.
 */
export interface ExecutionWindow {
  readonly kind: 'auction' | 'continuous' | 'at_last';
  /** The first instant of the window at or after the one asked about. */
  readonly atMs: number;
  /** The end of the window (exclusive); an auction's is one millisecond after its instant. */
  readonly untilMs: number;
  /** The instant whose simulated price is the window's one price; null in continuous trading. */
  readonly priceAtMs: number | null;
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

/** The first window of a day's phases (in time order) that ends after `atMs`. */
export function windowOfDay(phases: readonly { name: string; start: string; end: string }[], atMs: number): ExecutionWindow | null {
  for (const phase of phases) {
    const start = Date.parse(phase.start);
    const end = Date.parse(phase.end);
    switch (phase.name) {
      case 'opening_auction':
      case 'closing_auction':
        if (end >= atMs) return { kind: 'auction', atMs: end, untilMs: end + 1, priceAtMs: end };
        break;
      case 'continuous':
        if (end > atMs) return { kind: 'continuous', atMs: Math.max(start, atMs), untilMs: end, priceAtMs: null };
        break;
      case 'trading_at_last':
        if (end > atMs) return { kind: 'at_last', atMs: Math.max(start, atMs), untilMs: end, priceAtMs: start };
        break;
      default:
        break;
    }
  }
  return null;
}

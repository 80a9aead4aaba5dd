import { DAY_MS, dateOf, dayStartMs, isCalendarDate } from '../../lib/dates.js';
import type { ErrorDetail } from '../../lib/errors.js';
import type { Exchange } from '../../partners/markets.js';
import type { TradingDays } from './trading-days.js';

/**
 * Time in force, expiry, and the vocabulary of cancels and amends: pure rules, shared by the order
 * service, the router and the partner connectors.
 *
 * - `day`: open until the close of the exchange's session: the session of the day the order was
 *   placed, or the next one when it was placed after the close or on a day the exchange is closed.
 * - `gtc`: good till cancelled; never expires.
 * - `gtd`: good till the close of `expire_date` (or the end of that UTC day when the exchange does
 *   not open that day).
 * - `ioc`: what can execute at once executes, the rest is cancelled (`unfilled`).
 * - `fok`: the whole quantity executes at once, or nothing does (cancelled, `unfilled`).
 */
export const TIME_IN_FORCE = ['day', 'gtc', 'gtd', 'ioc', 'fok'] as const;
export type TimeInForce = (typeof TIME_IN_FORCE)[number];

/** The `failure_reason` of a failed order: why the partner refused it (docs/concepts.md). */
export const FAILURE_REASONS = ['sgi_rejected', 'insufficient_funds', 'instrument_suspended'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * Why an order was cancelled: `requested` (by the client), `expired` (its time in force ran out),
 * `unfilled` (the rest of an ioc or fok order), `partner` (by the SGI on its own initiative).
 */
export const CANCEL_REASONS = ['requested', 'expired', 'unfilled', 'partner'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

/** The reasons the service itself asks a partner to cancel with. */
export type CancelRequestReason = Extract<CancelReason, 'requested' | 'expired'>;

/** A request waiting for the partner's answer, as the Order shows it. */
export const PENDING_REQUESTS = ['pending_cancel', 'pending_amend'] as const;
export type PendingRequest = (typeof PENDING_REQUESTS)[number];

/**
 * Why a partner refused a cancel or an amend: the order had already ended (`already_filled`,
 * `already_rejected`, `already_cancelled`), the new quantity was not above what had executed
 * meanwhile (`below_filled`), the partner did not know the order (`unknown_order`), or the SGI
 * declined for a reason of its own (`partner_refused`).
 */
export const REQUEST_REFUSALS = [
  'already_filled',
  'already_rejected',
  'already_cancelled',
  'below_filled',
  'unknown_order',
  'partner_refused',
] as const;
export type RequestRefusal = (typeof REQUEST_REFUSALS)[number];

/** The instant 00:00 UTC of `date`, or NaN when it is not a real calendar date written YYYY-MM-DD. */
export function dayStart(date: string): number {
  return isCalendarDate(date) ? dayStartMs(date) : Number.NaN;
}

/** The same calendar day a year after `date` (29 February becomes 1 March). */
function aYearAfter(dayMs: number): number {
  const d = new Date(dayMs);
  return Date.UTC(d.getUTCFullYear() + 1, d.getUTCMonth(), d.getUTCDate());
}

/**
 * The rule `expire_date`: required with `gtd` and only with it; a real date from today (UTC, at
 * `nowMs`) to the same day a year later, both included. Returns the failed check, or null.
 */
export function checkExpireDate(timeInForce: TimeInForce, expireDate: string | undefined, nowMs: number): ErrorDetail | null {
  const fail = (message: string): ErrorDetail => ({ field: 'expire_date', rule: 'expire_date', value: expireDate ?? null, message });
  if (timeInForce !== 'gtd') return expireDate === undefined ? null : fail(`expire_date is only for time_in_force gtd, not ${timeInForce}`);
  if (expireDate === undefined) return fail('expire_date is required with time_in_force gtd');
  const day = dayStart(expireDate);
  if (Number.isNaN(day)) return fail('expire_date must be a date, YYYY-MM-DD');
  const today = dayStartMs(dateOf(nowMs));
  if (day < today) return fail('expire_date is in the past');
  if (day > aYearAfter(today)) return fail('expire_date is more than a year ahead');
  return null;
}

/**
 * When an order placed at `createdMs` expires: the close of its session for `day`, the close of
 * `expire_date` for `gtd` (the end of that day when the exchange is closed then), never for the
 * others (null). An ioc or fok order ends at the partner at once, so it needs no expiry here.
 */
export function expiryInstant(
  days: TradingDays,
  exchange: Exchange,
  timeInForce: TimeInForce,
  expireDate: string | null,
  createdMs: number,
): number | null {
  switch (timeInForce) {
    case 'gtc':
    case 'ioc':
    case 'fok':
      return null;
    case 'gtd': {
      if (expireDate === null) throw new TypeError('a gtd order has an expire_date');
      return days.closeOf(exchange, expireDate) ?? dayStart(expireDate) + DAY_MS;
    }
    case 'day': {
      const today = dateOf(createdMs);
      const close = days.closeOf(exchange, today);
      if (close !== null && close > createdMs) return close;
      const next = days.addOpenDays(exchange, today, 1);
      return days.closeOf(exchange, next) ?? dayStart(next) + DAY_MS;
    }
  }
}

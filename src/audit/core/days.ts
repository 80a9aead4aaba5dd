import { DAY_MS, dateOf, dayStartMs } from '../../lib/dates.js';
import { idFloorAt } from '../../lib/ids.js';

/**
 * The latest day whose snapshot may be built at `now`: day D is closed once D+1 00:00Z plus
 * `settleMs` has passed. The settling time lets orders stamped just before midnight, whose
 * transactions commit a moment later, be visible to the builder.
 */
export function lastClosedDay(now: number, settleMs: number): string {
  return dateOf(now - settleMs - DAY_MS);
}

/** Whether day `date` is closed at `now` (see lastClosedDay). */
export function isClosed(date: string, now: number, settleMs: number): boolean {
  return dayStartMs(date) + DAY_MS + settleMs <= now;
}

/**
 * The smallest order id whose UUIDv7 time is at or after `ms`. Order ids are UUIDv7 of the order's
 * `created_at` (lib/ids.ts; at most 1 ms later when 4096 ids share a millisecond), and TypeID text
 * sorts like the UUID bytes, so a day's orders lie between idFloor(start) and idFloor(end), give or
 * take that millisecond. The builder uses the bounds, widened, only to let the primary key index
 * range-scan the day in id order; `created_at` stays the filter that decides membership.
 */
export function orderIdFloor(ms: number): string {
  return idFloorAt('order', ms);
}

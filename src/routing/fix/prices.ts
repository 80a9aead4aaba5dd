/**
 * Prices cross the FIX boundary as decimal text in currency units (Price 44, LastPx 31); the service
 * counts in cents. Both directions work on the digits, never through a binary float, so 0.29 stays
 * 29 cents.
 */

/** Cents as a FIX price in currency units: 1500050 -> "15000.5", 100 -> "1", 7 -> "0.07". */
export function centsToPrice(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`price in cents must be a non-negative safe integer, got ${cents}`);
  const units = Math.floor(cents / 100);
  const rest = cents % 100;
  if (rest === 0) return String(units);
  return `${units}.${String(rest).padStart(2, '0').replace(/0$/, '')}`;
}

/**
 * A FIX price (currency units, decimal text) in cents. `exact` is false when the price has a
 * fraction of a cent, which is then rounded half up: the service's amounts have no finer unit.
 * Null when the text is not a non-negative decimal number.
 */
export function priceToCents(text: string): { cents: number; exact: boolean } | null {
  const match = /^\+?(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (match === null) return null;
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  const kept = `${whole}${fraction.slice(0, 2).padEnd(2, '0')}`;
  const dropped = fraction.slice(2);
  let cents = Number(kept);
  if (!Number.isSafeInteger(cents)) return null;
  const exact = /^0*$/.test(dropped);
  if (!exact && (dropped[0] ?? '0') >= '5') cents += 1;
  return { cents, exact };
}

/** A FIX quantity (decimal text) as a whole number; null when it is not one. */
export function parseQty(text: string | null | undefined): number | null {
  if (text === null || text === undefined) return null;
  const match = /^\+?(\d+)(?:\.0*)?$/.exec(text.trim());
  if (match === null) return null;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : null;
}

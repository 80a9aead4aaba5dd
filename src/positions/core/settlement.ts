/**
 * What of a position has not settled yet (pure). A position keeps, beside its quantity, the signed
 * quantities its recent fills added, by the clock their order lives on (null: real time; a sandbox
 * test clock's id otherwise) and by trade date. A fill settles on its settlement date (the trade
 * date plus the exchange's settlement days, in open days of its calendar), from 00:00 UTC of that day
 * on its clock: the moment its `settlement_status` becomes `settled` (orders/core/settlement.ts).
 * `settled_qty` is the quantity less what has not.
 *
 * The settlement date is computed when the position is read, from the calendar as it is then, so that
 * it is always the `settlement_date` the order's fills show.
 */

/** `[clock, trade date (YYYY-MM-DD), signed quantity]`. */
export type UnsettledEntry = readonly [clock: string | null, tradeDate: string, qty: number];

/**
 * Entries whose trade date lies this many days before a later fill's, on the same clock, are dropped:
 * they have settled. Settlement cycles are a few open days (T+3 on each exchange served); a month
 * leaves room for any run of holidays a calendar can hold.
 */
export const SETTLEMENT_HORIZON_DAYS = 31;

const DAY_MS = 86_400_000;

/** `date` moved by `days` calendar days (YYYY-MM-DD, UTC). */
export function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

export function parseUnsettled(column: string | null | undefined): UnsettledEntry[] {
  if (column === null || column === undefined || column === '') return [];
  return JSON.parse(column) as UnsettledEntry[];
}

export function serialiseUnsettled(entries: readonly UnsettledEntry[]): string {
  return JSON.stringify(entries);
}

/**
 * The entries with `qty` added on `tradeDate` of `clock`, entries of that clock older than the
 * horizon before `tradeDate` dropped, and entries that net to zero removed. Sorted by clock and date,
 * so that equal sets serialise alike.
 */
export function addUnsettled(entries: readonly UnsettledEntry[], clock: string | null, tradeDate: string, qty: number): UnsettledEntry[] {
  const oldest = shiftDate(tradeDate, -SETTLEMENT_HORIZON_DAYS);
  const out: UnsettledEntry[] = [];
  let added = false;
  for (const [c, date, q] of entries) {
    if (c === clock && date < oldest) continue;
    if (c === clock && date === tradeDate) {
      added = true;
      if (q + qty !== 0) out.push([c, date, q + qty]);
    } else out.push([c, date, q]);
  }
  if (!added && qty !== 0) out.push([clock, tradeDate, qty]);
  return out.sort(compareEntries);
}

function compareEntries(a: UnsettledEntry, b: UnsettledEntry): number {
  const ca = a[0] ?? '';
  const cb = b[0] ?? '';
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}

/**
 * The quantity of `entries` not yet settled: entries whose settlement date (`settles(tradeDate)`) is
 * after today on their clock (`today(clock)`, YYYY-MM-DD). A fill whose settlement date is today has
 * settled, as its `settlement_status` says.
 */
export function unsettledQty(
  entries: readonly UnsettledEntry[],
  settles: (tradeDate: string) => string,
  today: (clock: string | null) => string,
): bigint {
  let sum = 0n;
  for (const [clock, tradeDate, qty] of entries) {
    if (settles(tradeDate) > today(clock)) sum += BigInt(qty);
  }
  return sum;
}

/** The test clocks the entries name (their time is read to judge what settled). */
export function clocksOf(entries: readonly UnsettledEntry[]): string[] {
  return [...new Set(entries.map(([clock]) => clock).filter((c): c is string => c !== null))];
}

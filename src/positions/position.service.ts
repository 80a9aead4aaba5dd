import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { isoMillis, utcDay } from '../lib/clock.js';
import type { OrderRow } from '../orders/order.table.js';
import type { TradingDays } from '../orders/core/trading-days.js';
import type { CalendarSource } from '../orders/order.service.js';
import { currencyOfInstrument, exchangeOfInstrument, type Exchange } from '../partners/markets.js';
import type { ReferenceData, ReferenceSnapshot } from '../partners/reference-data.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { applyTrade, averageCostCents, FLAT, valuation, type PositionAmounts } from './core/average-cost.js';
import { addUnsettled, clocksOf, parseUnsettled, serialiseUnsettled, unsettledQty } from './core/settlement.js';
import {
  clockTimes,
  findPosition,
  listPositions,
  lockBook,
  savePosition,
  type ListedPosition,
  type PositionFilter,
  type PositionKey,
} from './position.repository.js';
import type { Position } from './position.schemas.js';
import type { PositionTable } from './position.table.js';

export interface PositionServiceOptions {
  dialect: DialectName;
  /** Open days from trade date to settlement, per exchange. */
  settlementDays: (exchange: Exchange) => number;
}

/** A fill as the positions take it: its order's side and clock, its quantity, price and time. */
export interface AppliedFill {
  readonly fill_qty: number;
  readonly fill_price_cents: number;
  /** Epoch milliseconds. */
  readonly executed_at: number;
}

export interface PositionPage {
  items: Position[];
  /** The key of the last position when another page follows, else null. */
  next: readonly [string, string, string] | null;
}

/**
 * An integer for a JSON body: a number while it is exact, else a bigint (the serialiser writes its
 * digits): a quantity times a price can pass 2^53.
 */
export function jsonInteger(value: bigint): number {
  return (value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value) as number;
}

export function amountsOf(row: Pick<PositionTable, 'qty' | 'cost_cents' | 'realised_pnl_cents'> | undefined): PositionAmounts {
  if (row === undefined) return FLAT;
  return { qty: BigInt(row.qty), cost_cents: BigInt(row.cost_cents), realised_pnl_cents: BigInt(row.realised_pnl_cents) };
}

/** The stored form of a position's amounts (a quantity beyond 2^53 is refused rather than rounded). */
export function storedAmounts(p: PositionAmounts): Pick<PositionTable, 'qty' | 'cost_cents' | 'realised_pnl_cents'> {
  const qty = Number(p.qty);
  if (!Number.isSafeInteger(qty)) throw new RangeError(`position quantity ${p.qty} exceeds the safe integer range`);
  return { qty, cost_cents: p.cost_cents.toString(), realised_pnl_cents: p.realised_pnl_cents.toString() };
}

/**
 * Investors' positions, per subject, partner and instrument (docs/positions.md). Each fill changes its
 * position in the transaction that applies it (`fillApplied`, called by the router), so that a read
 * is one range of the positions' key, whatever the number of fills behind it; what has settled is
 * worked out at the read from the few recent fills each position keeps, with the calendars and
 * clocks as they are then.
 */
export class PositionService {
  constructor(
    private readonly reference: ReferenceData,
    private readonly calendars: CalendarSource,
    private readonly clock: Clock,
    private readonly options: PositionServiceOptions,
  ) {}

  /** Settlement dates by exchange and trade date, for the calendar they were computed with. */
  #settlements: { calendar: TradingDays; dates: Map<string, string> } | null = null;

  /**
   * The settlement date of a trade of `instrument` on `tradeDate`, from the calendar as it is now;
   * remembered until the calendar is reloaded (a read computes it for each recent trade date).
   */
  settlementDate(instrument: string, tradeDate: string): string {
    const calendar = this.calendars.current();
    if (this.#settlements?.calendar !== calendar || this.#settlements.dates.size > 10_000)
      this.#settlements = { calendar, dates: new Map() };
    const exchange = exchangeOfInstrument(instrument);
    const key = `${exchange}:${tradeDate}`;
    let date = this.#settlements.dates.get(key);
    if (date === undefined) {
      date = calendar.addOpenDays(exchange, tradeDate, this.options.settlementDays(exchange));
      this.#settlements.dates.set(key, date);
    }
    return date;
  }

  /**
   * Applies a fill of `order` to its position, in the caller's transaction (the one that stores the
   * fill), under its book's lock. A fill that settled on or before the date of the book's statement
   * is already in that statement's holdings (a report read late): it changes nothing.
   */
  async fillApplied(trx: Kysely<Database>, order: OrderRow, fill: AppliedFill): Promise<void> {
    const key: PositionKey = {
      client_id: order.client_id,
      subject_id: order.subject_id,
      rcpt_to: order.rcpt_to,
      instrument: order.instrument,
    };
    const now = this.clock.now().getTime();
    // Sent together: PostgreSQL reads the position once the book's lock is taken, as a statement of
    // its own, so it sees what the lock's previous holder committed. A book made here was missing
    // when the read was sent: the position is read again under the new book's lock.
    const [{ book, made }, read] = await Promise.all([lockBook(trx, this.options.dialect, key, now), findPosition(trx, key)]);
    const tradeDate = utcDay(fill.executed_at);
    if (book.statement_as_of !== null && this.settlementDate(order.instrument, tradeDate) <= book.statement_as_of) return;
    const current = made ? await findPosition(trx, key) : read;
    const amounts = applyTrade(amountsOf(current), { side: order.side, qty: fill.fill_qty, price_cents: fill.fill_price_cents });
    const signed = order.side === 'buy' ? fill.fill_qty : -fill.fill_qty;
    const unsettled = addUnsettled(parseUnsettled(current?.unsettled), order.test_clock_id ?? null, tradeDate, signed);
    await savePosition(trx, {
      ...key,
      ...storedAmounts(amounts),
      unsettled: serialiseUnsettled(unsettled),
      statement_as_of: book.statement_as_of,
      updated_at: now,
    });
  }

  /** A page of the client's positions (GET /v1/positions), in key order. */
  async list(
    db: Kysely<Database>,
    clientId: string,
    filter: PositionFilter,
    page: { limit: number; after?: readonly [string, string, string] },
  ): Promise<PositionPage> {
    const rows = await listPositions(db, clientId, filter, page);
    const more = rows.length > page.limit;
    const slice = rows.slice(0, page.limit);
    const view = await this.#view(db, slice);
    const last = slice.at(-1);
    return { items: slice.map(view), next: more && last !== undefined ? [last.subject_id, last.rcpt_to, last.instrument] : null };
  }

  /** How rows become Positions: the catalogue's prices, the calendars and the clocks their fills live on. */
  async #view(db: Kysely<Database>, rows: readonly ListedPosition[]): Promise<(row: ListedPosition) => Position> {
    const reference = await this.reference.current();
    const entries = new Map(rows.map((row) => [row, parseUnsettled(row.unsettled)]));
    const clocks = await clockTimes(db, [...new Set([...entries.values()].flatMap(clocksOf))]);
    const now = this.clock.now().getTime();
    const today = utcDay(now);
    const todayOf = (clock: string | null) => (clock === null ? today : utcDay(clocks.get(clock) ?? now));
    return (row) =>
      toPosition(row, reference, entries.get(row) ?? [], (tradeDate) => this.settlementDate(row.instrument, tradeDate), todayOf);
  }
}

function toPosition(
  row: ListedPosition,
  reference: ReferenceSnapshot,
  unsettled: ReturnType<typeof parseUnsettled>,
  settles: (tradeDate: string) => string,
  todayOf: (clock: string | null) => string,
): Position {
  const amounts = amountsOf(row);
  const instrument = reference.instrument(row.instrument);
  const price = instrument?.reference_price_cents ?? null;
  const value = price === null ? null : valuation(amounts, price);
  const average = averageCostCents(amounts);
  return {
    subject_id: row.subject_id,
    rcpt_to: row.rcpt_to,
    instrument: row.instrument,
    currency: instrument?.currency ?? currencyOfInstrument(row.instrument),
    qty: row.qty,
    settled_qty: jsonInteger(amounts.qty - unsettledQty(unsettled, settles, todayOf)),
    average_cost_cents: average === null ? null : jsonInteger(average),
    reference_price_cents: price,
    market_value_cents: value === null ? null : jsonInteger(value.market_value_cents),
    unrealised_pnl_cents: value === null ? null : jsonInteger(value.unrealised_pnl_cents),
    realised_pnl_cents: jsonInteger(amounts.realised_pnl_cents),
    statement_as_of: row.statement_as_of,
    updated_at: isoMillis(row.updated_at),
  };
}

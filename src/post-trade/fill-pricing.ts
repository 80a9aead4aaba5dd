import type { Kysely } from 'kysely';
import { utcDay } from '../lib/clock.js';
import { listFills } from '../orders/order.repository.js';
import { storedFees, type ScheduleUsed } from '../orders/fill.js';
import type { OrderFillTable, OrderRow } from '../orders/order.table.js';
import { findInstrument } from '../partners/instrument.repository.js';
import { CAPABILITIES, exchangeOfInstrument, type Capability } from '../partners/markets.js';
import type { Database } from '../storage/schema.js';
import { fillAmounts } from '../partners/core/fees.js';
import { scheduleFor, type ExchangeFeeVersion, type PartnerFeeVersion } from '../partners/core/fee-schedule.js';
import { findScheduleInForce, type ScheduleInForce, scheduleWrites } from '../partners/fee-schedule.repository.js';
import type { FeeScope } from '../partners/fee-schedule.table.js';

/**
 * What a transaction has read for its fills, by transaction: the fills one transaction prices (a
 * batch of a partner's reports) share the fee schedule versions in force and the instruments' classes.
 * Kept while this process writes no schedule (a batch on SQLite may hold an import's unit too); a
 * transaction reads nothing another process commits after its first read of a version either way, as
 * if it had priced all its fills at once.
 */
interface ReadIn {
  readonly writes: number;
  readonly versions: Map<string, ScheduleInForce | undefined>;
  readonly classes: Map<string, Capability | null>;
}
const readIn = new WeakMap<object, ReadIn>();

function readBy(trx: Kysely<Database>): ReadIn {
  const writes = scheduleWrites();
  let read = readIn.get(trx);
  if (read === undefined || read.writes !== writes) {
    read = { writes, versions: new Map(), classes: new Map() };
    readIn.set(trx, read);
  }
  return read;
}

async function scheduleInForce(
  trx: Kysely<Database>,
  scope: FeeScope,
  owner: string,
  tradeDate: string,
): Promise<ScheduleInForce | undefined> {
  const read = readBy(trx);
  const key = `${scope}\u0000${owner}\u0000${tradeDate}`;
  if (read.versions.has(key)) return read.versions.get(key);
  const version = await findScheduleInForce(trx, scope, owner, tradeDate);
  if (scheduleWrites() === read.writes) read.versions.set(key, version);
  return version;
}

/** The class of `code` that prices its fees (null: unknown to the catalogue, or a class no fee names). */
async function feeClassOf(trx: Kysely<Database>, code: string): Promise<Capability | null> {
  const read = readBy(trx);
  const known = read.classes.get(code);
  if (known !== undefined) return known;
  const instrument = await findInstrument(trx, code);
  const found =
    instrument !== undefined && (CAPABILITIES as readonly string[]).includes(instrument.class) ? (instrument.class as Capability) : null;
  read.classes.set(code, found);
  return found;
}

/**
 * Versions' contents as parsed, by their text: every fill of a day is priced with the same few
 * versions. Keyed by the text read in the pricing transaction, so a version changed since is a new
 * entry, never a stale one. Frozen: callers share them.
 */
const parsed = new Map<string, unknown>();

function parsedContent(content: string): unknown {
  let value = parsed.get(content);
  if (value === undefined) {
    if (parsed.size >= 64) parsed.clear();
    value = deepFreeze(JSON.parse(content));
    parsed.set(content, value);
  }
  return value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The columns of a fill that fix its amounts when it is applied. */
export type FillAmountColumns = Required<Pick<OrderFillTable, 'gross_cents' | 'fees' | 'net_cents' | 'fee_schedules'>>;

/**
 * The amounts of a fill about to be applied to `order`, in the caller's transaction (the one that
 * applies the fill), so that they are fixed with it: a later schedule never changes them. The
 * versions are those in force on the trade date (the UTC day of `executed_at`); the order's earlier
 * fills of that day carry the minimum commission (partners/core/fees.ts). `missing` names the schedules no
 * version of which was in force (that part is charged nothing).
 */
export async function priceFill(
  trx: Kysely<Database>,
  order: Pick<OrderRow, 'id' | 'side' | 'instrument' | 'rcpt_to' | 'filled_qty'>,
  execution: { fill_qty: number; fill_price_cents: number; executed_at: number },
): Promise<{ columns: FillAmountColumns; missing: FeeScope[] }> {
  const tradeDate = utcDay(execution.executed_at);
  const exchange = exchangeOfInstrument(order.instrument);
  const [instrumentClass, partnerRow, exchangeRow, fills] = await Promise.all([
    feeClassOf(trx, order.instrument),
    scheduleInForce(trx, 'partner', order.rcpt_to, tradeDate),
    scheduleInForce(trx, 'exchange', exchange, tradeDate),
    // An order with nothing filled yet has no earlier fill to read (its first fill is the common case).
    order.filled_qty === 0 ? [] : listFills(trx, order.id),
  ]);
  const sameDay = fills.filter((f) => utcDay(Number(f.executed_at)) === tradeDate);
  const amounts = fillAmounts({
    side: order.side,
    qty: execution.fill_qty,
    price_cents: execution.fill_price_cents,
    instrumentClass,
    schedule: scheduleFor(
      partnerRow === undefined ? null : (parsedContent(partnerRow.content) as PartnerFeeVersion),
      exchangeRow === undefined ? null : (parsedContent(exchangeRow.content) as ExchangeFeeVersion),
      instrumentClass,
    ),
    earlier: {
      gross_cents: sameDay.reduce((sum, f) => sum + BigInt(f.fill_qty) * BigInt(f.fill_price_cents), 0n),
      fees: sameDay.flatMap((f) => storedFees(f.fees)),
    },
  });
  const used: ScheduleUsed[] = [partnerRow, exchangeRow]
    .filter((r) => r !== undefined)
    .map((r) => ({ scope: r.scope, id: r.owner, effective_from: r.effective_from }));
  return {
    columns: {
      gross_cents: amounts.gross_cents.toString(),
      fees: JSON.stringify(amounts.fees.map((f) => ({ type: f.type, amount_cents: f.amount_cents.toString() }))),
      net_cents: amounts.net_cents.toString(),
      fee_schedules: JSON.stringify(used),
    },
    missing: (['partner', 'exchange'] as const).filter((scope) => !used.some((u) => u.scope === scope)),
  };
}

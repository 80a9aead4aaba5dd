import type { Kysely } from 'kysely';
import { utcDay } from '../lib/clock.js';
import { validationError, type ErrorDetail } from '../lib/errors.js';
import { currencyOfInstrument, type Currency } from '../partners/markets.js';
import type { ReferenceInstrument, ReferenceSnapshot } from '../partners/reference-data.js';
import type { KycLevel } from '../kyc/levels.js';
import type { OrderRequest } from './order.schemas.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { heldAgainstCap, sumHeld, type CappedOrder } from './core/amend.js';
import { AT_PAR, checkCap, monthWindow, orderNotionalCents, toFcfaCents, type FcfaRate } from './core/caps.js';
import { marketWorstPriceCents } from './core/price-rules.js';
import { subjectOrdersInWindow } from './order.repository.js';

/** The detail of a 422 `fx_rate`: an amount in `currency` on `day` cannot be counted in FCFA. */
export function fxRateMissing(instrument: string, currency: string, day: string, whose: string): ErrorDetail {
  return {
    field: 'instrument',
    rule: 'fx_rate',
    value: instrument,
    message: `no ${currency} reference rate for ${day} (${whose}): the monthly cap counts in FCFA; the operator imports rates with cauri fx import`,
    currency,
    date: day,
  };
}

/**
 * FCFA per unit of `currency` on the UTC day of `atMs`, from the reference data; a 422 `fx_rate`
 * naming `instrument` (the order's) when no rate was imported for that day.
 */
export function fcfaRateOn(reference: ReferenceSnapshot, currency: Currency, atMs: number, instrument: string, whose: string): FcfaRate {
  const day = utcDay(atMs);
  const rate = reference.fcfaRate(currency, day);
  if (rate === undefined) throw validationError([fxRateMissing(instrument, currency, day, whose)]);
  return rate;
}

export interface CapWindow {
  readonly clientId: string;
  readonly subjectId: string;
  /** An instant of the calendar month (UTC) whose orders count. */
  readonly monthOf: number;
  /** The instrument of the order being checked, named by a 422 `fx_rate`. */
  readonly instrument: string;
}

/**
 * What the subject's orders of the month hold against the monthly cap, in cents of FCFA, read under
 * the per-subject lock (taken here, held until the caller's transaction ends) so that two
 * concurrent orders or amends cannot each see room for both. Each order counts at its currency's
 * rate of the day it was placed; a market order at the worst price of its band around the reference
 * price it was placed at (an instrument since removed, or without a band: that reference price); an
 * order with an amend pending at the larger of its amount as it is and as amended (`heldAgainstCap`).
 */
export async function heldThisMonth(
  trx: Kysely<Database>,
  dialect: DialectName,
  reference: ReferenceSnapshot,
  w: CapWindow,
): Promise<bigint> {
  const window = monthWindow(new Date(w.monthOf));
  // Sent together: PostgreSQL runs the read once the lock is taken, as a statement of its own (so it
  // sees every order committed by the lock's previous holder), in the same round trip.
  const [, orders] = await Promise.all([
    lockForTransaction(trx, dialect, `cap:${w.clientId}:${w.subjectId}`),
    subjectOrdersInWindow(trx, w.clientId, w.subjectId, window.startMs, window.endMs),
  ]);
  const held: CappedOrder[] = [];
  for (const r of orders) {
    const rules = reference.instrument(r.instrument);
    const order = {
      ...r,
      fill_notional_cents: BigInt(r.fill_notional_cents),
      market_price_cents:
        (rules === undefined ? null : marketWorstPriceCents({ ...rules, reference_price_cents: r.reference_price_cents })) ??
        r.reference_price_cents,
    };
    // An order that holds nothing needs no rate.
    if (heldAgainstCap({ ...order, fcfa_rate: AT_PAR }) === 0n) continue;
    held.push({
      ...order,
      fcfa_rate: fcfaRateOn(
        reference,
        currencyOfInstrument(r.instrument),
        r.created_at,
        w.instrument,
        'the day of an earlier order of this month',
      ),
    });
  }
  return sumHeld(held);
}

/**
 * The monthly cap: the buy orders of the subject's calendar month (UTC) that are not
 * failed, each counted in FCFA at its currency's rate of the day it was placed (`heldThisMonth`,
 * pending amends at their larger amount), plus this one, may not exceed the level's cap. A market
 * buy counts at its worst case, the band's upper limit. Read under a per-subject lock, so that two
 * concurrent orders cannot each see room for both.
 */
export function checkNewOrderCap(c: {
  level: KycLevel;
  request: OrderRequest;
  instrument: ReferenceInstrument;
  reference: ReferenceSnapshot;
  now: number;
  used: bigint;
}): void {
  const { request, instrument, reference, used } = c;
  const rate = fcfaRateOn(reference, instrument.currency, c.now, request.instrument, 'the day of this order');
  const worst = marketWorstPriceCents(instrument);
  if (request.limit_price_cents === undefined && worst === null) {
    throw validationError([
      {
        field: 'limit_price_cents',
        rule: 'required',
        value: null,
        message: `${request.instrument} has no price band, so a market buy has no worst price to count against the ${c.level} monthly cap: give a limit price`,
      },
    ]);
  }
  const newCents = toFcfaCents(
    orderNotionalCents({
      side: 'buy',
      qty: request.qty,
      limit_price_cents: request.limit_price_cents ?? null,
      market_price_cents: worst ?? 0,
    }),
    rate,
  );
  const check = checkCap(c.level, used, newCents);
  if (!check.ok) {
    throw validationError([
      {
        field: 'qty',
        rule: 'monthly_cap',
        value: request.qty,
        message: `the order (${newCents} cents of FCFA) exceeds the ${c.level} monthly cap; ${check.remaining_cents} cents of FCFA remain this month`,
        order_cents: Number(newCents),
        remaining_cents: Number(check.remaining_cents),
        cap_cents: Number(check.cap_cents),
      },
    ]);
  }
}

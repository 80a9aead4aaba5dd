import type { Kysely } from 'kysely';
import { utcDay } from '../lib/clock.js';
import { validationError, type ErrorDetail } from '../lib/errors.js';
import { currencyOfInstrument, type Currency } from '../partners/markets.js';
import type { ReferenceSnapshot } from '../partners/reference-data.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { heldAgainstCap, sumHeld, type CappedOrder } from './core/amend.js';
import { AT_PAR, monthWindow, type FcfaRate } from './core/caps.js';
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

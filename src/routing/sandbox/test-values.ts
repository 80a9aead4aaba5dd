import { LARGE_ORDER_QTY } from './market.js';

/**
 * The documented test values of the sandbox partners, as data: docs/sandbox.md is written from
 * SANDBOX_TEST_VALUES (a test checks that it lists each), and the simulator reads the constants.
 */

/** Quantities that trigger a fixed outcome, whatever the instrument and price. */
export const TEST_QTY = Object.freeze({
  SGI_REJECTED: 13,
  INSUFFICIENT_FUNDS: 402,
  INSTRUMENT_SUSPENDED: 451,
  UNAVAILABLE: 503,
  PARTIAL_THEN_REST: 7777,
  ANSWERS_LATER: 202,
  PARTNER_CANCELS: 410,
  EXCHANGE_EXPIRES: 504,
});
/** An amend to this quantity is refused by the SGI (`partner_refused`). */
export const AMEND_REFUSED_QTY = TEST_QTY.SGI_REJECTED;
/** Submits of a `qty` 503 order that throw ConnectorUnavailableError before one is accepted. */
export const UNAVAILABLE_ATTEMPTS = 2;
/** What a `qty` 7777 order fills before it rests: one fill of 1111 (7777 = 7 x 1111). */
export const PARTIAL_THEN_REST_FILL_QTY = 1111;
/** A buy with this limit, or a sell with the maximum limit, rests until cancelled. */
export const NEVER_FILL_BUY_LIMIT_CENTS = 1;
export const NEVER_FILL_SELL_LIMIT_CENTS = 1_000_000_000_000;
/** A suspended instrument is refused by the exchange this long after the SGI accepted the order. */
export const EXCHANGE_REJECT_DELAY_MS = 1000;
/** The SGI cancels a `qty` 410 order, and the exchange expires a `qty` 504 one, this long after acceptance. */
export const PARTNER_CANCEL_DELAY_MS = 1000;
/** A `qty` 202 order's cancels and amends are answered this long after they are made. */
export const DEFERRED_ANSWER_MS = 3000;

export interface SandboxTestValue {
  /** The field of the order (or of an amend) that carries the value. */
  readonly trigger: 'qty' | 'instrument_status' | 'limit_price_cents' | 'time_in_force';
  /** The value, as typed in an order. */
  readonly value: string;
  /** What the order becomes. */
  readonly outcome: string;
  /** The reports the partner produces, in order. */
  readonly reports: string;
  readonly description: string;
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

/**
 * The documented test values. When several apply, the first in this order wins: qty 503 (only for
 * the unavailable attempts; the accepted attempt then follows the rules below), a suspended
 * instrument or qty 451, qty 13, qty 402, qty 410 and 504, then the resting limits; qty 7777, qty
 * 202 and the time in force (ioc, fok) apply to an accepted order. Any other order follows the
 * normal behaviour (see `tranchesFor` and `simulatedPriceCents` in market.ts).
 */
export const SANDBOX_TEST_VALUES: readonly SandboxTestValue[] = Object.freeze([
  {
    trigger: 'qty',
    value: String(TEST_QTY.SGI_REJECTED),
    outcome: 'failed, failure_reason sgi_rejected',
    reports: 'rejected (sgi_rejected), at hand-over',
    description: 'The SGI refuses the order when it is handed over: the order never becomes routed.',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.INSUFFICIENT_FUNDS),
    outcome: 'failed, failure_reason insufficient_funds',
    reports: 'rejected (insufficient_funds), at hand-over',
    description: 'The SGI refuses the order for lack of funds (or of securities, for a sell).',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.INSTRUMENT_SUSPENDED),
    outcome: 'routed, then failed with failure_reason instrument_suspended',
    reports: `accepted; rejected (instrument_suspended) ${EXCHANGE_REJECT_DELAY_MS / 1000} s later`,
    description: 'The SGI accepts the order and the exchange refuses it: trading in the instrument is suspended.',
  },
  {
    trigger: 'instrument_status',
    value: 'suspended',
    outcome: 'routed, then failed with failure_reason instrument_suspended',
    reports: `accepted; rejected (instrument_suspended) ${EXCHANGE_REJECT_DELAY_MS / 1000} s later`,
    description: 'Any order on a suspended instrument of the catalogue (TRANS.BRVM, BRASC.BVMAC, SOLAR.GSE), whatever its quantity.',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.UNAVAILABLE),
    outcome: `created, then routed on the ${ordinal(UNAVAILABLE_ATTEMPTS + 1)} hand-over; then fills as usual`,
    reports: `none for the first ${UNAVAILABLE_ATTEMPTS} attempts (connector unavailable); then accepted and a fill`,
    description: `The partner is unreachable for the first ${UNAVAILABLE_ATTEMPTS} hand-overs of the order, which exercises the router's retries.`,
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.PARTNER_CANCELS),
    outcome: 'routed, then cancelled with cancel_reason partner',
    reports: `accepted; cancelled (partner) ${PARTNER_CANCEL_DELAY_MS / 1000} s later`,
    description: 'The SGI cancels the order on its own initiative before anything executes.',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.EXCHANGE_EXPIRES),
    outcome: 'routed, then cancelled with cancel_reason expired',
    reports: `accepted; cancelled (expired) ${PARTNER_CANCEL_DELAY_MS / 1000} s later`,
    description: "The partner reports that the exchange expired the order, ahead of the service's own expiry: the result is the same.",
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.PARTIAL_THEN_REST),
    outcome: `partially_filled (filled_qty ${PARTIAL_THEN_REST_FILL_QTY}) until cancelled; then cancelled, filled_qty still ${PARTIAL_THEN_REST_FILL_QTY}`,
    reports: `accepted; partial_fill of ${PARTIAL_THEN_REST_FILL_QTY} (as a limit order: when the price crosses); cancelled on cancel`,
    description: 'One partial execution, then the rest waits on the book forever: the way to get "cancelled with a partial fill".',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.ANSWERS_LATER),
    outcome: 'as usual, but a cancel or amend answers 202 with the pending request',
    reports: `as usual; a cancel or amend is answered ${DEFERRED_ANSWER_MS / 1000} s after it was made (cancelled, replaced or refused), unless the order ended first`,
    description:
      'The partner takes cancels and amends and answers them later: the way to see pending_cancel and pending_amend, and a cancel refused because the order filled meanwhile.',
  },
  {
    trigger: 'qty',
    value: `${AMEND_REFUSED_QTY} (in an amend)`,
    outcome: 'unchanged, last_refusal partner_refused',
    reports: 'none: the amend is refused (partner_refused)',
    description: 'The SGI refuses an amend to this quantity.',
  },
  {
    trigger: 'limit_price_cents',
    value: `${NEVER_FILL_BUY_LIMIT_CENTS} (buy)`,
    outcome: 'routed, resting until cancelled',
    reports: 'accepted; cancelled on cancel',
    description:
      'A buy limit of 1 cent never fills. The order must pass the price checks: only an instrument without a price band and with a 1-cent tick takes it (the synthetic funds and money-market bills).',
  },
  {
    trigger: 'limit_price_cents',
    value: `${NEVER_FILL_SELL_LIMIT_CENTS} (sell)`,
    outcome: 'routed, resting until cancelled',
    reports: 'accepted; cancelled on cancel',
    description: 'A sell at the largest allowed limit never fills. Like the 1-cent buy, only on an instrument without a price band.',
  },
  {
    trigger: 'time_in_force',
    value: 'ioc',
    outcome: 'filled, or cancelled with cancel_reason unfilled and filled_qty what executed at once',
    reports: 'accepted; at once the first execution of the order (when the price crosses a limit), then cancelled (unfilled) for the rest',
    description: `Immediate or cancel: an order below ${LARGE_ORDER_QTY.toLocaleString('en-US')} fills entirely at a marketable price; a larger one executes its first part only; a resting limit executes nothing.`,
  },
  {
    trigger: 'time_in_force',
    value: 'fok',
    outcome: 'filled at once, or cancelled with cancel_reason unfilled and nothing filled',
    reports: 'accepted; at once either fill (the whole quantity) or cancelled (unfilled)',
    description: `Fill or kill: the whole quantity executes at once only when the order would fill in one execution (below ${LARGE_ORDER_QTY.toLocaleString('en-US')}, at a marketable price).`,
  },
]);

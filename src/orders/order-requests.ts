import type { Kysely } from 'kysely';
import { ApiError, validationError, type ErrorDetail } from '../lib/errors.js';
import type { ClientId } from '../lib/ids.js';
import type { KycLevel } from '../kyc/levels.js';
import { currencyOfInstrument } from '../partners/markets.js';
import type { ReferenceInstrument, ReferenceSnapshot } from '../partners/reference-data.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { findClientAttestationShared } from '../kyc/attestation.repository.js';
import { amendConflict, capIncreaseCents, checkAmendValues } from './core/amend.js';
import { attestationRefusal } from './core/attestation-rules.js';
import { capCents, checkCap } from './core/caps.js';
import { checkTradingRules } from './core/price-rules.js';
import { isFinal } from './core/state-machine.js';
import { fcfaRateOn, heldThisMonth } from './monthly-cap.js';
import { updateOrder } from './order.repository.js';
import type { AmendRequest } from './order.schemas.js';
import type { OrderRow } from './order.table.js';

/**
 * Cancel and amend requests recorded on an order, in the caller's transaction (OrderService reads
 * the order first): the router sends them to the partner and applies its answer.
 */

/**
 * Records a cancel request in the caller's transaction: a final order is 409 `conflict`; otherwise
 * the order shows `pending_request: pending_cancel` (replacing an amend still waiting) until the
 * router has the partner's answer. Asking again while a cancel waits changes nothing.
 */
export async function recordCancelRequest(trx: Kysely<Database>, row: OrderRow, now: number): Promise<OrderRow> {
  if (isFinal(row.status)) throw new ApiError('conflict', `Order ${row.id} is ${row.status}; only an open order can be cancelled`);
  if (row.pending_request === 'pending_cancel') return row;
  const changes: Partial<OrderRow> = {
    ...newRequest(row),
    pending_request: 'pending_cancel',
    cancel_request_reason: 'requested',
    amend_qty: null,
    amend_limit_price_cents: null,
    cancel_requested_at: now,
    next_route_at: now,
    route_lease_until: null,
    updated_at: now,
  };
  await updateOrder(trx, row.id, changes);
  return { ...row, ...changes };
}

/**
 * Records an amend request in the caller's transaction. 409 `conflict` unless the order is a limit
 * order, routed or partially filled, with no other request waiting; 422 when the order's attestation
 * is revoked or expired (`not_revoked`, `not_expired`, as for a new order), when the new values change
 * nothing, do not stay above the filled quantity (`above_filled`), break the instrument's rules as
 * a new order's would (`lot_size`, `tick_size`, `price_band`: the values the amend sends, against
 * the instrument's rules and reference price now), or take the subject over its monthly cap
 * (`monthly_cap`: the increase counts, in FCFA at the order's rate of the day it was placed, in the
 * month it was placed, under the same per-subject lock as a new order; `fx_rate` without that
 * rate). The order then shows `pending_request: pending_amend` and the values asked for.
 */
export async function recordAmendRequest(
  trx: Kysely<Database>,
  row: OrderRow,
  change: AmendRequest,
  ctx: { reference: ReferenceSnapshot; dialect: DialectName; now: () => number },
): Promise<OrderRow> {
  const reference = ctx.reference;
  const conflict = amendConflict(row);
  if (conflict !== null) throw new ApiError('conflict', `Order ${row.id} cannot be amended: ${conflict}`);
  const details = [...checkAmendValues(row, change), ...amendedTradingRules(reference, row, change)];
  // The attestation as a new order reads it (FOR SHARE on PostgreSQL): a revocation waits for this
  // transaction, so no amend is recorded under an attestation after its revoke returned.
  const attestation = await findClientAttestationShared(trx, ctx.dialect, row.client_id, row.kyc_attestation_id);
  const refusal = attestationRefusal(attestation, row.kyc_attestation_id, ctx.now());
  if (refusal !== null) details.push(refusal);
  if (details.length > 0) throw validationError(details);

  const level = row.kyc_level as KycLevel;
  if (capIncreaseCents(row, change) > 0n && capCents(level) !== null) {
    // The order counts in the month it was placed in, at that day's rate, like every order.
    const rate = fcfaRateOn(
      reference,
      currencyOfInstrument(row.instrument),
      row.created_at,
      row.instrument,
      'the day the order was placed',
    );
    const increase = capIncreaseCents(row, change, rate);
    const used = await heldThisMonth(trx, ctx.dialect, reference, {
      clientId: row.client_id as ClientId,
      subjectId: row.subject_id,
      monthOf: row.created_at,
      instrument: row.instrument,
    });
    const check = checkCap(level, used, increase);
    if (!check.ok) {
      const field = change.qty === undefined ? 'limit_price_cents' : 'qty';
      throw validationError([
        {
          field,
          rule: 'monthly_cap',
          value: change[field],
          message: `the amend adds ${increase} cents of FCFA, over the ${level} monthly cap; ${check.remaining_cents} cents of FCFA remain this month`,
          order_cents: Number(increase),
          remaining_cents: Number(check.remaining_cents),
          cap_cents: Number(check.cap_cents),
        },
      ]);
    }
  }

  const now = ctx.now();
  const changes: Partial<OrderRow> = {
    ...newRequest(row),
    pending_request: 'pending_amend',
    cancel_request_reason: null,
    amend_qty: change.qty ?? row.qty,
    amend_limit_price_cents: change.limit_price_cents ?? row.limit_price_cents,
    next_route_at: now,
    route_lease_until: null,
    updated_at: now,
  };
  await updateOrder(trx, row.id, changes);
  return { ...row, ...changes };
}

/**
 * The instrument's rules (lot, tick, band) that the values an amend sends break, checked as a new
 * order's are: against the instrument's rules and reference price now. A value the amend leaves as
 * it is was checked when the order was placed. An instrument no longer in the catalogue has no rules
 * to check, as the router hands such an order over without any.
 */
function amendedTradingRules(reference: ReferenceSnapshot, row: OrderRow, change: AmendRequest): ErrorDetail[] {
  const instrument: ReferenceInstrument | undefined = reference.instrument(row.instrument);
  if (instrument === undefined) return [];
  const sent = new Set(Object.keys(change));
  return checkTradingRules(instrument, { qty: change.qty ?? row.qty, limit_price_cents: change.limit_price_cents ?? null }).filter((d) =>
    sent.has(d.field),
  );
}

/** The id of the order's next cancel or amend request: `<order id>.<n>`. */
function newRequest(row: OrderRow): Pick<OrderRow, 'pending_request_id' | 'requests_made'> {
  const n = row.requests_made + 1;
  return { pending_request_id: `${row.id}.${n}`, requests_made: n };
}

import { randomBytes } from 'node:crypto';
import type { EventType } from '../../events/event.types.js';
import { isoMillis, isoSeconds, utcDay } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { EventDataByType } from '../event-data.js';

// ----- Sample data, for `POST /v1/webhooks/endpoints/{id}/test` -------------------------------------
//
// The shapes are the event data schemas (../event-data.ts), the same ones the real events follow,
// so a sample is what a receiver will see for a real event of that type, so an integrator can build and test a handler
// before any real order exists. Ids are freshly minted TypeIDs of the right kind, so a sample never
// names a real resource. The sample attestation and snapshot carry a well-formed but meaningless
// signature under a fresh key id that no key document lists: a sample can never pass verification
// and be mistaken for a real attestation.

export interface SampleContext {
  /** The moment the sample event is made; every date in the sample is derived from it. */
  at: Date;
  /** The endpoint the test event is sent to (`we_...`), echoed by `webhook.test`; null: to every subscriber. */
  endpointId: string | null;
  /** Issuer constant of the deployment; default `cauri`. */
  issuer?: string;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
// A synthetic BRVM equity of the sandbox catalogue (no real issuer), priced in cents of XOF.
const SAMPLE_INSTRUMENT = 'TELCI.BRVM';
const SAMPLE_PRICE_CENTS = 2_500_000;

function hex32(): string {
  return randomBytes(32).toString('hex');
}

/** A syntactically valid Ed25519 signature (64 bytes, base64url) that verifies under no key. */
function placeholderSignature(): string {
  return randomBytes(64).toString('base64url');
}

type SampleOrderKind = 'created' | 'routed' | 'failed' | 'cancelled' | 'amended' | 'request_refused';

/**
 * A day limit order of 100 shares as each order event shows it: just created, routed, failed at
 * hand-over, cancelled at the client's request with 40 filled, amended to 150 shares, or still open
 * after the partner refused a cancel.
 */
function sampleOrder(kind: SampleOrderKind, at: Date): EventDataByType['order.created'] {
  const createdAt = kind === 'created' ? at.getTime() : at.getTime() - 1_500;
  const status = kind === 'amended' || kind === 'request_refused' ? 'partially_filled' : kind;
  const filled = status === 'partially_filled' || status === 'cancelled' ? 40 : 0;
  return {
    id: newId('order', createdAt),
    status,
    rcpt_to: newId('partner'),
    kyc_attestation_id: newId('attestation'),
    instrument: SAMPLE_INSTRUMENT,
    currency: 'XOF',
    side: 'buy',
    qty: kind === 'amended' ? 150 : 100,
    limit_price_cents: SAMPLE_PRICE_CENTS,
    filled_qty: filled,
    average_fill_price_cents: filled === 0 ? null : SAMPLE_PRICE_CENTS,
    created_at: isoMillis(createdAt),
    updated_at: isoMillis(at),
    failure_reason: status === 'failed' ? 'sgi_rejected' : null,
    client_metadata: { portfolio: 'sample', reference: 'TEST-0001' },
    time_in_force: 'day',
    expire_date: null,
    expires_at: isoMillis(sampleDayClose(createdAt)),
    cancel_reason: status === 'cancelled' ? 'requested' : null,
    pending_request: null,
    pending_changes: null,
    last_refusal: kind === 'request_refused' ? { request: 'cancel', reason: 'partner_refused', refused_at: isoMillis(at) } : null,
  };
}

/**
 * When a sample day order placed at `placedMs` expires: the BRVM's next close (15:00 UTC, Monday to
 * Friday) after it, as a day order placed after the close or at a weekend waits for the next session.
 * Holidays are left out: the sample shows the rule, not a calendar.
 */
function sampleDayClose(placedMs: number): number {
  for (let day = Date.parse(`${utcDay(placedMs)}T15:00:00.000Z`); ; day += DAY_MS) {
    const weekday = new Date(day).getUTCDay();
    if (day > placedMs && weekday !== 0 && weekday !== 6) return day;
  }
}

function sampleExecuted(at: Date): EventDataByType['order.executed'] {
  // The second of two fills: 60 at 24,950.00 XOF earlier, then 40 at 25,000.00 XOF now, so the
  // cumulative members differ from this fill's own and the order is complete.
  const earlierQty = 60;
  const earlierPrice = 2_495_000;
  const fillQty = 40;
  const fillPrice = SAMPLE_PRICE_CENTS;
  const filled = earlierQty + fillQty;
  return {
    order_id: newId('order', at.getTime() - 10 * MINUTE_MS),
    rcpt_to: newId('partner'),
    instrument: SAMPLE_INSTRUMENT,
    side: 'buy',
    filled_qty: filled,
    average_fill_price_cents: Math.floor((earlierQty * earlierPrice + fillQty * fillPrice) / filled + 0.5),
    executed_at: isoMillis(at),
    exchange_ref: `BRVM-${utcDay(at).replaceAll('-', '')}-000042`,
    fill_qty: fillQty,
    fill_price_cents: fillPrice,
    status: 'filled',
  };
}

function samplePositionBreak(at: Date): EventDataByType['position.break'] {
  // Yesterday's statement, compared with the one of the day before: the SGI holds 100 shares where
  // the fills settled since give 120 (a sale the service did not route, or a fill not reported).
  return {
    statement_id: newId('statement', at.getTime()),
    subject_id: 'sample-subject-0001',
    rcpt_to: newId('partner'),
    as_of: utcDay(at.getTime() - DAY_MS),
    previous_statement_id: newId('statement', at.getTime() - DAY_MS),
    breaks: [{ instrument: SAMPLE_INSTRUMENT, statement_qty: 100, expected_qty: 120, difference_qty: -20 }],
  };
}

function sampleAttestation(at: Date, issuer: string): EventDataByType['kyc.attested'] {
  // Attestations use whole seconds (docs/concepts.md).
  const issued = Math.floor(at.getTime() / 1000) * 1000;
  const checked = isoSeconds(issued - 2 * DAY_MS);
  return {
    id: newId('attestation', issued),
    version: '1.0',
    subject_id: 'sample-subject-0001',
    level: 'KYC2',
    issued_at: isoSeconds(issued),
    expires_at: isoSeconds(issued + 365 * DAY_MS),
    issuer,
    verifications: [
      { type: 'id_doc', verified_at: checked, method: 'ocr_mrz' },
      { type: 'selfie', verified_at: checked, method: 'face_match' },
      { type: 'address', verified_at: checked, method: 'utility_bill' },
      { type: 'liveness', verified_at: checked, method: 'video_selfie' },
    ],
    jurisdictions: ['UEMOA'],
    signature: placeholderSignature(),
    key_id: newId('signingKey'),
  };
}

function sampleSnapshot(at: Date): EventDataByType['audit.snapshot'] {
  // The snapshot for the UTC day before `at`, anchored shortly after midnight.
  const day = utcDay(at.getTime() - DAY_MS);
  return {
    date: day,
    merkle_root: hex32(),
    count: 1284,
    anchored_at: isoSeconds(Date.parse(`${utcDay(at)}T00:05:00Z`)),
    anchors: [{ chain: 'sandbox', tx_hash: hex32(), block_height: 482_113 }],
    previous_merkle_root: hex32(),
    key_id: newId('signingKey'),
    signature: placeholderSignature(),
  };
}

/**
 * A realistic `data` for an event of `type`, as the "send a test event" endpoint delivers it.
 * Every date is derived from `context.at`; ids are new on each call.
 */
export function sampleEventData<T extends EventType>(type: T, context: SampleContext): EventDataByType[T];
export function sampleEventData(type: EventType, context: SampleContext): EventDataByType[EventType] {
  const { at } = context;
  const issuer = context.issuer ?? 'cauri';
  switch (type) {
    case 'order.created':
      return sampleOrder('created', at);
    case 'order.routed':
      return sampleOrder('routed', at);
    case 'order.failed':
      return sampleOrder('failed', at);
    case 'order.cancelled':
      return sampleOrder('cancelled', at);
    case 'order.amended':
      return sampleOrder('amended', at);
    case 'order.request_refused':
      return sampleOrder('request_refused', at);
    case 'order.executed':
      return sampleExecuted(at);
    case 'position.break':
      return samplePositionBreak(at);
    case 'kyc.attested':
      return sampleAttestation(at, issuer);
    case 'kyc.revoked':
      return {
        attestation_id: newId('attestation', at.getTime() - 30 * DAY_MS),
        subject_id: 'sample-subject-0001',
        revoked_at: isoSeconds(at),
        reason: 'subject_request',
      };
    case 'audit.snapshot':
      return sampleSnapshot(at);
    case 'webhook.test':
      return {
        message: `This is a test event sent by ${issuer} to check that your endpoint receives and verifies deliveries.`,
        endpoint_id: context.endpointId,
      };
  }
}

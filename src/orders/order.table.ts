import type { CancelReason, CancelRequestReason, PendingRequest, TimeInForce } from './core/lifecycle.js';
import type { OrderStatus } from './core/state-machine.js';

export interface OrderTable {
  id: string;
  client_id: string;
  status: OrderStatus;
  rcpt_to: string;
  kyc_attestation_id: string;
  /** SHA-256 of the RFC 8785 form of the attestation the order was accepted under (audit leaves). */
  kyc_attestation_sha256: string;
  subject_id: string;
  kyc_level: string;
  instrument: string;
  side: 'buy' | 'sell';
  qty: number;
  limit_price_cents: number | null;
  /** The instrument's reference price when the order was placed (caps of market orders). */
  reference_price_cents: number;
  filled_qty: number;
  /** Sum of fill_qty * fill_price_cents, decimal text (it can exceed 2^63). */
  fill_notional_cents: string;
  failure_reason: string | null;
  /** JSON text, or null when the request had none. */
  client_metadata: string | null;
  /** The partner's connector; `<connector>@<clock id>` for an order on a test clock (its own simulated partner). */
  connector: string;
  /** The sandbox test clock the order lives on; absent or null: real time. */
  test_clock_id?: string | null;
  /** The `seq` of the last execution report applied (0: none). */
  last_report_seq: number;
  route_attempts: number;
  /** When the router should next try the hand-over (or the cancel); null when nothing is due. */
  next_route_at: number | null;
  route_lease_until: number | null;
  /** When the client last asked to cancel (informational; `pending_request` drives the router). */
  cancel_requested_at: number | null;
  created_at: number;
  updated_at: number;
  time_in_force: TimeInForce;
  /** `YYYY-MM-DD` for a gtd order, else null. */
  expire_date: string | null;
  /** When a day or gtd order expires (the exchange's close), computed at creation; null otherwise. */
  expires_at: number | null;
  /** The expiry queue: `expires_at` while the expiry is still to be acted on; null once claimed or final. */
  expiry_due_at: number | null;
  cancel_reason: CancelReason | null;
  /** A cancel or amend sent (or being sent) to the partner and not yet answered. */
  pending_request: PendingRequest | null;
  /** `<order id>.<n>`: the id the partner knows the pending request by. */
  pending_request_id: string | null;
  /** Why the pending cancel was asked for. */
  cancel_request_reason: CancelRequestReason | null;
  /** The pending amend's new quantity and limit (both set while an amend is pending). */
  amend_qty: number | null;
  amend_limit_price_cents: number | null;
  /** How many cancel and amend requests were made: the `<n>` of the next request id. */
  requests_made: number;
  /** JSON `{ request, reason, refused_at }` of the partner's last refusal, or null. */
  last_refusal: string | null;
  /**
   * The investor's account number at the partner, fixed when the order was accepted (the one the
   * client registered, else the partner's default); null when there was none, and for the orders of
   * before accounts were kept.
   */
  account: string | null;
}

export interface OrderFillTable {
  /** `fil_...`, made when the execution is applied. */
  id: string;
  order_id: string;
  seq: number;
  report_id: string;
  fill_qty: number;
  fill_price_cents: number;
  exchange_ref: string;
  executed_at: number;
  /** `fill_qty * fill_price_cents`, decimal text; null for fills recorded before fees were charged. */
  gross_cents?: string | null;
  /** JSON `[{ type, amount_cents }]`, amounts as decimal text, fixed when the fill was applied; null: none. */
  fees?: string | null;
  /** Gross plus fees (a buy) or minus fees (a sell), decimal text; null with `fees`. */
  net_cents?: string | null;
  /** JSON `[{ scope, owner, effective_from }]`: the schedule versions the fees came from; null with `fees`. */
  fee_schedules?: string | null;
}

export type OrderRow = OrderTable;

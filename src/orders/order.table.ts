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
  connector: string;
  /** The `seq` of the last execution report applied (0: none). */
  last_report_seq: number;
  route_attempts: number;
  /** When the router should next try the hand-over (or the cancel); null when nothing is due. */
  next_route_at: number | null;
  route_lease_until: number | null;
  cancel_requested_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface OrderFillTable {
  order_id: string;
  seq: number;
  report_id: string;
  fill_qty: number;
  fill_price_cents: number;
  exchange_ref: string;
  executed_at: number;
}

export type OrderRow = OrderTable;

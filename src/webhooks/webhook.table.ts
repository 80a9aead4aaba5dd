/** Row types of the webhook tables (migration 2026-11-22T09-00-webhooks). Times are epoch milliseconds. */

export interface WebhookEndpointTable {
  id: string;
  client_id: string;
  url: string;
  /** The subscribed event types, as a JSON array of strings. */
  events: string;
  description: string | null;
  /** 0 or 1: a disabled endpoint gets no new deliveries, and its pending ones wait until it is enabled. */
  disabled: number;
  /** The signing secret, sealed (AES-256-GCM) under the webhook key with the endpoint id as context. */
  secret_sealed: string;
  /** The secret before the last rotation, still signed with until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** Set when the client deletes the endpoint: it disappears from the API and its deliveries stop. */
  deleted_at: number | null;
}

/** The body of an event's deliveries, serialised once and sent byte for byte on every attempt. */
export interface WebhookMessageTable {
  event_id: string;
  body: string;
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'dead' | 'cancelled';

/** One event to one endpoint. */
export interface WebhookDeliveryTable {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  /** The endpoint's owner, so that listings need no join. */
  client_id: string;
  /** `X-Cauri-Idempotency-Key`: a UUID fixed for this (event, endpoint) pair. */
  idempotency_key: string;
  status: DeliveryStatus;
  /** Attempts made so far, replays included. */
  attempts: number;
  /** When the first attempt was due: the origin of the retry schedule. */
  first_attempt_at: number;
  /** When the next attempt is due; null unless pending. */
  next_attempt_at: number | null;
  /** A worker that claimed the delivery holds it until then (it is sending the attempt). */
  lease_until: number | null;
  lease_owner: string | null;
  last_attempt_at: number | null;
  created_at: number;
  updated_at: number;
  /**
   * 1 once the delivery is in its client's listing index; 0 while it waits to be added there in a
   * batch (the delivery worker's own deliveries on SQLite; migration 2026-11-24T15-00). Listings read
   * both, so the flag changes how a delivery is found, never whether.
   */
  listed: number;
}

/** One HTTP attempt of a delivery. */
export interface WebhookAttemptTable {
  delivery_id: string;
  /** 1 for the first attempt, then 2, 3, ... (replays continue the sequence). */
  seq: number;
  attempted_at: number;
  /** The receiver's HTTP status, or null when no response came (refused address, timeout, network). */
  status_code: number | null;
  duration_ms: number;
  /** Why the attempt failed; null on success. */
  error: string | null;
}

export type WebhookEndpointRow = WebhookEndpointTable;
export type WebhookDeliveryRow = WebhookDeliveryTable;
export type WebhookAttemptRow = WebhookAttemptTable;

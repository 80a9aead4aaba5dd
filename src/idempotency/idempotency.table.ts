export type IdempotencyState = 'in_flight' | 'done';

export interface IdempotencyTable {
  client_id: string;
  key: string;
  /** SHA-256 of the canonical JSON of the route and body. */
  request_hash: string;
  state: IdempotencyState;
  /** While in flight, other requests with the key get 409 until then (a crashed holder's lease lapses). */
  locked_until: number;
  response_status: number | null;
  /** The exact response body sent the first time. */
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export type IdempotencyState = 'in_flight' | 'done';

export interface IdempotencyTable {
  client_id: string;
  key: string;
  /** SHA-256 of the canonical JSON of the route and body. */
  request_hash: string;
  /**
   * `done`: the response is final and replayed. `in_flight`: the work committed and its request is
   * still finishing (an order being handed over), so other requests with the key get 409 until
   * `locked_until`; after that its holder is taken for dead and the stored response becomes final.
   */
  state: IdempotencyState;
  locked_until: number;
  response_status: number | null;
  /**
   * The exact response body sent (or, while in flight, the one the request will send unless it
   * finishes with a newer one): JSON as sent, or sealed (`v1.` ...) when the response carries a secret.
   */
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

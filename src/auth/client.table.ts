export type ClientStatus = 'active' | 'disabled';

export interface ClientTable {
  id: string;
  name: string;
  /** JSON array of the scopes the client may be granted. */
  scopes: string;
  status: ClientStatus;
  created_at: number;
  /**
   * When the client was last disabled (Unix ms); kept when it is enabled again, because access tokens
   * issued before that moment stay refused for good.
   */
  disabled_at: number | null;
}

/** Only a keyed hash of each secret is stored; `expires_at` is set on the old secret at rotation. */
export interface ClientSecretTable {
  hash: string;
  client_id: string;
  created_at: number;
  expires_at: number | null;
}

export type ClientRow = ClientTable;

export type KeyPurpose = 'token' | 'attestation';

export interface SigningKeyTable {
  id: string;
  purpose: KeyPurpose;
  /** Raw 32-byte Ed25519 public key, base64url. */
  public_key: string;
  /** PKCS#8 private key sealed with AES-256-GCM under the master key (bound to the key id). */
  private_key_sealed: string;
  valid_from: number;
  /** Null while the key is current; set when a rotation closes its window. */
  valid_until: number | null;
  created_at: number;
}

export type SigningKeyRow = SigningKeyTable;

/** One signing key of the issuer key document (docs/concepts.md#the-key-document-and-key-rotation). */
export interface IssuerKey {
  key_id: string;
  algorithm: 'Ed25519';
  /** The 32-byte public key, base64url without padding. */
  public_key: string;
  valid_from: string;
  /** End of the window, exclusive. null (or absent) means the window is still open. */
  valid_until: string | null;
}

/** The document at `/.well-known/cauri`. Only `issuer` and `keys` are read by the verifier. */
export interface KeyDocument {
  version: string;
  issuer: string;
  protocol: string;
  keys: IssuerKey[];
  crl_endpoint: string;
  contact: string;
}

/** Reasons shared by every signed document (attestation, CRL, snapshot). */
export type SignedDocumentReason = 'malformed' | 'unknown_key' | 'key_not_valid_at_issue' | 'bad_signature';

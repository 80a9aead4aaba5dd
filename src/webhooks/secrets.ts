import { open, seal } from '../lib/crypto.js';

/** Opened secrets kept at most (16 endpoints per client, each with up to two secrets in rotation). */
const MAX_OPENED = 4096;

/**
 * Endpoint secrets at rest. They are sealed (AES-256-GCM), not hashed, because the service signs
 * with them; the endpoint id is bound as additional data, so a sealed secret copied onto another
 * endpoint's row does not open.
 */
export class EndpointSecrets {
  readonly #key: Buffer;
  /**
   * Secrets opened before, by endpoint id and sealed value: the delivery worker signs every attempt
   * and opening one (AES-256-GCM with its key schedule) was about 3 % of its profile. A sealed value
   * is written once (a rotation seals a new one), so an entry never goes stale; the endpoint id in the
   * key keeps the binding of the additional data (a copied value is still opened, and refused).
   */
  readonly #opened = new Map<string, string>();

  /** `key`: 32 bytes, derived from the master key for this purpose only. */
  constructor(key: Buffer) {
    this.#key = key;
  }

  seal(endpointId: string, secret: string): string {
    return seal(this.#key, Buffer.from(secret, 'utf8'), `webhook-endpoint:${endpointId}`);
  }

  open(endpointId: string, sealed: string): string {
    const key = `${endpointId} ${sealed}`;
    let secret = this.#opened.get(key);
    if (secret === undefined) {
      secret = open(this.#key, sealed, `webhook-endpoint:${endpointId}`).toString('utf8');
      if (this.#opened.size >= MAX_OPENED) this.#opened.clear();
      this.#opened.set(key, secret);
    }
    return secret;
  }
}

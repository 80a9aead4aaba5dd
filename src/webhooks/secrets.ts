import { open, seal } from '../lib/crypto.js';

/**
 * Endpoint secrets at rest. They are sealed (AES-256-GCM), not hashed, because the service signs
 * with them; the endpoint id is bound as additional data, so a sealed secret copied onto another
 * endpoint's row does not open.
 */
export class EndpointSecrets {
  readonly #key: Buffer;

  /** `key`: 32 bytes, derived from the master key for this purpose only. */
  constructor(key: Buffer) {
    this.#key = key;
  }

  seal(endpointId: string, secret: string): string {
    return seal(this.#key, Buffer.from(secret, 'utf8'), `webhook-endpoint:${endpointId}`);
  }

  open(endpointId: string, sealed: string): string {
    return open(this.#key, sealed, `webhook-endpoint:${endpointId}`).toString('utf8');
  }
}

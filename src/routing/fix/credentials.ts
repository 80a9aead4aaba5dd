import { open, seal } from '../../lib/crypto.js';

/** A partner's FIX logon secrets: Username (553) and Password (554). */
export interface FixCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * A partner's TLS material, PEM text: the client certificate (with its chain) and its private key,
 * which the gateway may require; and the certificate authorities the gateway's certificate must chain
 * to, in place of the public ones Node.js trusts. Each part is optional.
 */
export interface FixTlsMaterial {
  readonly client_cert: string | null;
  readonly client_key: string | null;
  readonly ca: string | null;
}

/**
 * Seals and opens a partner's FIX secrets with a key derived from the master key (purpose
 * `fix-credentials`). The partner id is bound as additional data: sealed secrets copied to another
 * partner's row do not open, nor do logon credentials opened as TLS material or the other way round.
 */
export class FixCredentialSealer {
  constructor(private readonly key: Buffer) {}

  seal(partnerId: string, credentials: FixCredentials): string {
    return seal(
      this.key,
      Buffer.from(JSON.stringify({ username: credentials.username, password: credentials.password }), 'utf8'),
      `fix-credentials:${partnerId}`,
    );
  }

  open(partnerId: string, sealed: string): FixCredentials {
    const value = JSON.parse(open(this.key, sealed, `fix-credentials:${partnerId}`).toString('utf8')) as FixCredentials;
    return { username: value.username, password: value.password };
  }

  sealTls(partnerId: string, material: FixTlsMaterial): string {
    return seal(
      this.key,
      Buffer.from(JSON.stringify({ client_cert: material.client_cert, client_key: material.client_key, ca: material.ca }), 'utf8'),
      `fix-tls:${partnerId}`,
    );
  }

  openTls(partnerId: string, sealed: string): FixTlsMaterial {
    const value = JSON.parse(open(this.key, sealed, `fix-tls:${partnerId}`).toString('utf8')) as FixTlsMaterial;
    return { client_cert: value.client_cert ?? null, client_key: value.client_key ?? null, ca: value.ca ?? null };
  }
}

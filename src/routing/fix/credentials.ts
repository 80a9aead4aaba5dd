import { open, seal } from '../../lib/crypto.js';

/** A partner's FIX logon secrets: Username (553) and Password (554). */
export interface FixCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * Seals and opens a partner's FIX credentials with a key derived from the master key (purpose
 * `fix-credentials`). The partner id is bound as additional data: sealed credentials copied to
 * another partner's row do not open.
 */
export class FixCredentialSealer {
  constructor(private readonly key: Buffer) {}

  seal(partnerId: string, credentials: FixCredentials): string {
    return seal(this.key, Buffer.from(JSON.stringify({ username: credentials.username, password: credentials.password }), 'utf8'), `fix-credentials:${partnerId}`);
  }

  open(partnerId: string, sealed: string): FixCredentials {
    const value = JSON.parse(open(this.key, sealed, `fix-credentials:${partnerId}`).toString('utf8')) as FixCredentials;
    return { username: value.username, password: value.password };
  }
}

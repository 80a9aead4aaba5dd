import { open, seal } from '../lib/crypto.js';

/** What a sealed body starts with (lib/crypto's format); a body stored in clear is JSON, never this. */
const SEALED_PREFIX = 'v1.';

/** The additional data a body is sealed under: a sealed body copied to another record does not open. */
function contextOf(clientId: string, key: string): string {
  return `idempotency-response:${clientId}:${key}`;
}

/**
 * The form a response body is stored in for replays: sealed (AES-256-GCM under `secretKey`) when it
 * carries a secret, so that no secret the service shows once lies in clear in the database (its
 * file, its WAL, a backup) for the 24 hours a replay needs it; as sent otherwise.
 */
export function storedForm(secretKey: Buffer, clientId: string, key: string, body: string, sealed: boolean): string {
  return sealed ? seal(secretKey, Buffer.from(body, 'utf8'), contextOf(clientId, key)) : body;
}

/** The body as it was sent, from its stored form (opened when sealed). */
export function sentForm(secretKey: Buffer, clientId: string, key: string, stored: string): string {
  return stored.startsWith(SEALED_PREFIX) ? open(secretKey, stored, contextOf(clientId, key)).toString('utf8') : stored;
}

import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ConfigError } from '../config/config.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { open, seal } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { closeKey, findCurrentKey, findKey, insertKey, listKeys } from './signing-key.repository.js';
import type { KeyPurpose, SigningKeyRow } from './signing-key.table.js';

/**
 * Key windows start and end on whole seconds, the precision of the date-times they sign (issued_at).
 * A window opens at the next whole second, strictly after any issued_at (floor of the signing time)
 * the previous key can have put in a document.
 */
function windowInstant(now: Date): number {
  return Math.floor(now.getTime() / 1000) * 1000 + 1000;
}

/**
 * The planned life of a key: the key document publishes it as the current key's `valid_until`, and
 * the maintenance worker rotates a day before it ends.
 */
export const PLANNED_KEY_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

export interface SigningKey {
  id: string;
  purpose: KeyPurpose;
  /** Raw Ed25519 public key, base64url (the key document's and JWKS's `x`). */
  publicKey: string;
  validFrom: number;
  validUntil: number | null;
  privateKeyObject: KeyObject;
  publicKeyObject: KeyObject;
}

/**
 * Ed25519 signing keys for one deployment, by purpose: access tokens and attestations (which also
 * sign revocation lists and audit snapshots). Private halves are sealed at rest under a key derived
 * from the master key, bound to the key id. Keys have consecutive validity windows: rotation closes
 * the current window at the instant the next opens, and every past key is kept so that what it signed
 * still verifies. Decoded keys are cached by id; which key is current is always read from the
 * database, so a rotation made by another process takes effect at once.
 */
export class KeyRing {
  readonly #cache = new Map<string, SigningKey>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly sealingKey: Buffer,
    private readonly clock: Clock,
  ) {}

  /**
   * The current key of `purpose`, created on first use. Pass the caller's transaction when signing.
   * Outside a transaction, a key whose planned end has passed (the rotation a day before it did not
   * run: no worker process was up) is rotated first, so that nothing is signed at an instant its
   * published window no longer covers.
   */
  async current(purpose: KeyPurpose, trx: Kysely<Database> = this.db): Promise<SigningKey> {
    for (let attempt = 0; attempt < 3; ) {
      const row = await findCurrentKey(trx, this.dialect, purpose, trx === this.db ? 'none' : 'share');
      if (row !== undefined) {
        const key = this.#decode(row);
        if (trx !== this.db || this.clock.now().getTime() < KeyRing.windowEnd(key)) return key;
        // Read again: the next key opens at this one's planned end, so after a longer pause it is
        // itself past its end, and each turn moves a year on.
        await this.rotate(purpose, { ifCurrent: key.id });
        continue;
      }
      if (trx === this.db) return this.#create(purpose);
      attempt++;
    }
    throw new Error(`no current ${purpose} key`);
  }

  /** Every key of `purpose`, oldest first (the key document and JWKS list them all). */
  async all(purpose: KeyPurpose): Promise<SigningKey[]> {
    return (await listKeys(this.db, purpose)).map((row) => this.#decode(row));
  }

  async find(purpose: KeyPurpose, id: string): Promise<SigningKey | undefined> {
    const cached = this.#cache.get(id);
    if (cached !== undefined && cached.purpose === purpose) return cached;
    const row = await findKey(this.db, id);
    return row === undefined || row.purpose !== purpose ? undefined : this.#decode(row);
  }

  /** End of the key's window: the rotation instant, or the planned end while it is current. */
  static windowEnd(key: SigningKey): number {
    return key.validUntil ?? key.validFrom + PLANNED_KEY_LIFETIME_MS;
  }

  /** Rotates when the current key is within a day of its planned end; true when it rotated. */
  async rotateIfDue(purpose: KeyPurpose): Promise<boolean> {
    const current = await this.current(purpose);
    if (this.clock.now().getTime() < KeyRing.windowEnd(current) - 24 * 60 * 60 * 1000) return false;
    return (await this.rotate(purpose, { ifCurrent: current.id })).previous !== null;
  }

  /**
   * Closes the current window and opens the next one at the same instant. With `ifCurrent`, only
   * while that key is still the current one: processes that found the same key due rotate it once,
   * the others get the key that replaced it (and `previous: null`).
   */
  async rotate(purpose: KeyPurpose, options: { ifCurrent?: string } = {}): Promise<{ previous: SigningKey | null; current: SigningKey }> {
    return this.db.transaction().execute(async (trx) => {
      await lockForTransaction(trx, this.dialect, `signing-keys:${purpose}`);
      const open = await findCurrentKey(trx, this.dialect, purpose, 'update');
      if (options.ifCurrent !== undefined && open !== undefined && open.id !== options.ifCurrent) {
        return { previous: null, current: this.#decode(open) };
      }
      // Past its planned end, the window closes where the key document said it would, never later.
      // Never an empty window, even for a key rotated within a second of its creation.
      const plannedEnd = open === undefined ? Infinity : open.valid_from + PLANNED_KEY_LIFETIME_MS;
      const at = Math.max(Math.min(windowInstant(this.clock.now()), plannedEnd), (open?.valid_from ?? 0) + 1000);
      if (open !== undefined) await closeKey(trx, open.id, at);
      const created = await this.#insertNew(trx, purpose, at);
      const previous = open === undefined ? null : this.#decode({ ...open, valid_until: at });
      if (previous !== null) this.#cache.set(previous.id, previous);
      return { previous, current: created };
    });
  }

  async #create(purpose: KeyPurpose): Promise<SigningKey> {
    return this.db.transaction().execute(async (trx) => {
      await lockForTransaction(trx, this.dialect, `signing-keys:${purpose}`);
      const existing = await findCurrentKey(trx, this.dialect, purpose, 'none');
      if (existing !== undefined) return this.#decode(existing);
      // The first key of a purpose: nothing was signed before it, so its window opens now.
      return this.#insertNew(trx, purpose, Math.floor(this.clock.now().getTime() / 1000) * 1000);
    });
  }

  async #insertNew(trx: Kysely<Database>, purpose: KeyPurpose, at: number): Promise<SigningKey> {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const id = newId('signingKey', at);
    const row: SigningKeyRow = {
      id,
      purpose,
      public_key: publicKey.export({ format: 'jwk' }).x as string,
      private_key_sealed: seal(this.sealingKey, privateKey.export({ format: 'der', type: 'pkcs8' }), `signing-key:${id}`),
      valid_from: at,
      valid_until: null,
      created_at: at,
    };
    await insertKey(trx, row);
    return this.#decode(row);
  }

  #unseal(row: SigningKeyRow): Buffer {
    try {
      return open(this.sealingKey, row.private_key_sealed, `signing-key:${row.id}`);
    } catch {
      // AES-GCM refuses a wrong key without saying more; the likely cause is configuration.
      // A ConfigError, so that the command line prints it as one line naming the variable (exit 2).
      throw new ConfigError(
        'CAURI_MASTER_KEY',
        `does not open signing key ${row.id} stored in this database: every process of a deployment must use the master key the database was created with`,
      );
    }
  }

  #decode(row: SigningKeyRow): SigningKey {
    const cached = this.#cache.get(row.id);
    if (cached !== undefined && cached.validUntil === row.valid_until) return cached;
    const privateKeyObject = cached?.privateKeyObject ?? createPrivateKey({ key: this.#unseal(row), format: 'der', type: 'pkcs8' });
    const key: SigningKey = {
      id: row.id,
      purpose: row.purpose,
      publicKey: row.public_key,
      validFrom: row.valid_from,
      validUntil: row.valid_until,
      privateKeyObject,
      publicKeyObject: cached?.publicKeyObject ?? createPublicKey(privateKeyObject),
    };
    this.#cache.set(row.id, key);
    return key;
  }
}

import { randomBytes } from 'node:crypto';
import { HmacSha256 } from '../lib/crypto.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { newId, type ClientId } from '../lib/ids.js';
import { CommittedCache } from '../storage/committed-cache.js';
import type { Database } from '../storage/schema.js';
import type { Mode } from '../config/config.js';
import {
  disableClient,
  enableClient,
  endSecrets,
  expireOpenSecrets,
  findClient,
  findClientBySecret,
  insertClient,
  insertSecret,
  listClients,
  clientState,
  type ClientState,
  type SecretOwner,
} from './client.repository.js';
import type { ClientRow } from './client.table.js';
import { SCOPES, type Scope } from './scopes.js';

/** How long the previous secret keeps working after a rotation (the specification's 24 hours). */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * When a rotation ends the previous secrets: after the 24-hour overlap (a routine rotation), or at
 * once (a secret that leaked).
 */
export type PreviousSecretExpiry = 'in_24_hours' | 'now';
export const PREVIOUS_SECRET_EXPIRIES: readonly PreviousSecretExpiry[] = ['in_24_hours', 'now'];

/**
 * Whether an access token issued at `iatSeconds` (its `iat` claim) is accepted for a client in this
 * state: the client is active, and the token was issued after the client was last disabled. Tokens
 * are bound to the client, not to the secret they were exchanged with; disabling the client is what
 * ends them, for good, even once it is enabled again. `iat` has whole seconds, so a token issued in
 * the second of the disabling counts as issued before it (enabling waits for that second to pass).
 */
export function clientAcceptsToken(client: ClientState | undefined, iatSeconds: number): boolean {
  if (client === undefined || client.status !== 'active') return false;
  return client.disabled_at === null || iatSeconds * 1000 > client.disabled_at;
}

/** Why a client refuses a token issued at `iatSeconds` (the 401's message), or null when it accepts it. */
export function tokenRefusal(client: ClientState | undefined, iatSeconds: number): string | null {
  if (clientAcceptsToken(client, iatSeconds)) return null;
  return client?.status === 'active' ? 'Access token issued before the client was last disabled; get a new one' : 'Client is disabled';
}

export interface Client {
  id: ClientId;
  name: string;
  scopes: Scope[];
  status: ClientRow['status'];
  created_at: string;
}

/** A client whose secret was just checked: what a token is issued for. */
export interface AuthenticatedClient {
  id: ClientId;
  scopes: Scope[];
}

export interface IssuedSecret {
  client_id: ClientId;
  client_secret: string;
  scopes: Scope[];
}

function toClient(row: ClientRow): Client {
  return {
    id: row.id as ClientId,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/**
 * Client credentials. A secret is `sk_test_` or `sk_live_` (by mode) and 32 random bytes; only an
 * HMAC-SHA-256 of it under a key derived from the master key is stored. The secrets are random, so a
 * keyed hash is enough to make a stolen table useless without the master key, and it keeps the token
 * endpoint fast (a password hash would cost milliseconds per exchange for no gain).
 */
export class ClientService {
  /** HMAC-SHA-256 under the secrets' key (see HmacSha256). */
  readonly #hmac: HmacSha256;
  /**
   * The owner of each secret hash checked since the last commit, scopes parsed (see CommittedCache):
   * a rotation, an expiry set or a client disabled is a commit, so none is missed. Unknown hashes are
   * not kept.
   */
  readonly #owners: CommittedCache<string, { row: SecretOwner; scopes: Scope[] } | undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    hashKey: Buffer,
    private readonly mode: Mode,
    private readonly clock: Clock,
    /** Storage.changeMarker; without it every check reads the database. */
    changeMarker: () => number | null = () => null,
  ) {
    this.#hmac = new HmacSha256(hashKey);
    this.#owners = new CommittedCache(changeMarker, 1_000);
  }

  get secretPrefix(): string {
    return this.mode === 'production' ? 'sk_live_' : 'sk_test_';
  }

  hash(secret: string): string {
    return this.#hmac.digest(secret, 'base64url');
  }

  #newSecret(): string {
    return `${this.secretPrefix}${randomBytes(32).toString('base64url')}`;
  }

  async create(name: string, scopes: readonly Scope[] = SCOPES): Promise<IssuedSecret> {
    const now = this.clock.now().getTime();
    const id = newId('client', now);
    const secret = this.#newSecret();
    await this.db.transaction().execute(async (trx) => {
      await insertClient(trx, {
        id,
        name,
        scopes: JSON.stringify([...new Set(scopes)]),
        status: 'active',
        created_at: now,
        disabled_at: null,
      });
      await insertSecret(trx, { hash: this.hash(secret), client_id: id, created_at: now, expires_at: null });
    });
    return { client_id: id, client_secret: secret, scopes: [...new Set(scopes)] };
  }

  /**
   * Issues a new secret. Every older one keeps working for 24 hours, then fails; or, with
   * `expirePrevious: 'now'`, every older one fails from now on, those still in the overlap of an
   * earlier rotation included.
   */
  async rotateSecret(
    clientId: string,
    expirePrevious: PreviousSecretExpiry = 'in_24_hours',
  ): Promise<(IssuedSecret & { previous_secret_expires_at: string }) | null> {
    return this.db.transaction().execute((trx) => this.rotateSecretIn(trx, clientId, expirePrevious));
  }

  /**
   * rotateSecret in the caller's transaction (the self-service route's, which also stores the
   * response for replays of its Idempotency-Key).
   */
  async rotateSecretIn(
    trx: Kysely<Database>,
    clientId: string,
    expirePrevious: PreviousSecretExpiry = 'in_24_hours',
  ): Promise<(IssuedSecret & { previous_secret_expires_at: string }) | null> {
    const now = this.clock.now().getTime();
    const until = expirePrevious === 'now' ? now : now + SECRET_OVERLAP_MS;
    const secret = this.#newSecret();
    const client = await findClient(trx, clientId);
    if (client === undefined) return null;
    if (expirePrevious === 'now') await endSecrets(trx, clientId, now, 'all');
    else await expireOpenSecrets(trx, clientId, until);
    await insertSecret(trx, { hash: this.hash(secret), client_id: clientId, created_at: now, expires_at: null });
    return {
      client_id: client.id as ClientId,
      client_secret: secret,
      scopes: JSON.parse(client.scopes) as Scope[],
      previous_secret_expires_at: new Date(until).toISOString(),
    };
  }

  /**
   * Ends the overlap of the last rotation now: every previous secret of the client fails from now
   * on; the current one keeps working. The number of secrets ended, or null for an unknown client.
   */
  async expirePreviousSecrets(clientId: string): Promise<number | null> {
    const now = this.clock.now().getTime();
    return this.db
      .transaction()
      .execute(async (trx) => ((await findClient(trx, clientId)) === undefined ? null : endSecrets(trx, clientId, now, 'previous')));
  }

  async list(): Promise<Client[]> {
    return (await listClients(this.db)).map(toClient);
  }

  /** Status and last disabling of the client, which decide whether its access tokens are accepted. */
  async state(id: string): Promise<ClientState | undefined> {
    return clientState(this.db, id);
  }

  async get(id: string): Promise<Client | undefined> {
    const row = await findClient(this.db, id);
    return row === undefined ? undefined : toClient(row);
  }

  /**
   * Disables a client (its secrets and its access tokens stop working at once) or enables it again
   * (its secrets work again; the tokens issued before the disabling stay refused). False for an
   * unknown client.
   */
  async setDisabled(id: string, disabled: boolean): Promise<boolean> {
    if (disabled) return (await disableClient(this.db, id, this.clock.now().getTime())) === 1;
    const row = await findClient(this.db, id);
    if (row === undefined) return false;
    if (row.status === 'disabled' && row.disabled_at !== null) {
      // A token's `iat` has whole seconds: a token issued in the second of the disabling counts as
      // issued before it. Enabling waits for that second to end, so every later token is accepted.
      const wait = (Math.floor(row.disabled_at / 1000) + 1) * 1000 - this.clock.now().getTime();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 1000)));
    }
    return (await enableClient(this.db, id)) === 1;
  }

  /**
   * The active client these credentials belong to, or null. A secret of the other mode, an expired
   * (rotated-out) secret, a disabled client or a secret of another client are all simply wrong.
   */
  async authenticate(clientId: string, secret: string): Promise<AuthenticatedClient | null> {
    if (!secret.startsWith(this.secretPrefix)) return null;
    const hash = this.hash(secret);
    const owner = await this.#owners.get(
      hash,
      async () => {
        const row = await findClientBySecret(this.db, hash);
        return row === undefined ? undefined : { row, scopes: JSON.parse(row.scopes) as Scope[] };
      },
      (found) => found !== undefined,
    );
    if (owner === undefined) return null;
    const { row, scopes } = owner;
    if (row.id !== clientId || row.status !== 'active') return null;
    if (row.secret_expires_at !== null && row.secret_expires_at <= this.clock.now().getTime()) return null;
    return { id: row.id as ClientId, scopes: [...scopes] };
  }
}

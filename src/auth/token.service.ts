import { randomUUID } from 'node:crypto';
import { jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../lib/clock.js';
import { signEd25519 } from '../lib/crypto.js';
import { ApiError } from '../lib/errors.js';
import type { ClientId } from '../lib/ids.js';
import { KeyRing, type SigningKey } from '../keys/key-ring.js';
import { isScope, type Scope } from './scopes.js';

/** The specification's token lifetime: 15 minutes. */
export const TOKEN_LIFETIME_SECONDS = 900;

export interface AccessToken {
  clientId: ClientId;
  scopes: ReadonlySet<Scope>;
  livemode: boolean;
  /** Issue time, Unix seconds (whether the client was disabled since is checked against it). */
  iat: number;
  /** Expiry, Unix seconds. */
  exp: number;
}

const CACHE_LIMIT = 10_000;
/** An Ed25519 signature (64 bytes) in base64url: the last characters of every token of ours. */
const SIGNATURE_CHARS = 86;

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
}

/**
 * The 401 of a request that carries no bearer token at all (no Authorization header, or another
 * scheme): the challenge names the scheme without an error code (RFC 6750 §3.1).
 */
export function missingToken(): ApiError {
  return new ApiError('unauthorized', 'Missing Authorization: Bearer <access token>', { headers: { 'www-authenticate': 'Bearer' } });
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1); 401 otherwise. */
export function bearerTokenOf(header: string | undefined): string {
  if (header === undefined || !/^Bearer(\s|$)/i.test(header)) throw missingToken();
  const match = /^Bearer ([A-Za-z0-9_.~+/-]+=*)$/i.exec(header);
  if (match === null) throw unauthorized('Authorization header must be: Bearer <access token>');
  return match[1] as string;
}

/**
 * Access tokens: JWTs signed with Ed25519 (RFC 8037 `EdDSA`), typed `at+jwt` (RFC 9068), with the
 * claims listed in docs/concepts.md. Verification pins the algorithm and the key purpose, so `alg: none`, HMAC
 * tokens signed with the public key, and tokens signed by any other key are refused. A verified token
 * is remembered until it expires (Ed25519 verification costs about a tenth of a millisecond); whether
 * its client is still enabled is checked on every request by the caller.
 */
export class TokenService {
  /** Verified tokens by their signature's characters (see cached()). */
  readonly #verified = new Map<string, { token: string; grant: AccessToken }>();
  /**
   * The signing key, re-read from the key ring every few seconds rather than per token: a key rotated
   * by another process is picked up within that time, and tokens signed meanwhile by the previous key
   * still verify (it stays published).
   */
  #signing: { key: SigningKey; header: string; until: number } | null = null;

  constructor(
    private readonly keys: KeyRing,
    private readonly options: { issuer: string; audience: string; livemode: boolean },
    private readonly clock: Clock,
  ) {}

  /** The `iss` of every token: the issuer the authorization server metadata names. */
  get issuer(): string {
    return this.options.issuer;
  }

  async issue(clientId: ClientId, scopes: readonly Scope[]): Promise<string> {
    const now = this.clock.now().getTime();
    if (this.#signing === null || this.#signing.until <= now) {
      const key = await this.keys.current('token');
      // Kept 5 s, never past the key's published window (its planned end rotates it first).
      const until = Math.min(now + 5000, KeyRing.windowEnd(key));
      this.#signing = { key, header: base64url({ alg: 'EdDSA', kid: key.id, typ: 'at+jwt' }), until };
    }
    const { key, header } = this.#signing;
    const iat = Math.floor(now / 1000);
    // The compact JWS (RFC 7515 §7.1) is signed with node:crypto's one-shot sign on the thread pool:
    // jose signs through WebCrypto, whose job setup costs more than the Ed25519 signature itself
    // (docs/performance.md, "Figures behind the code"). Verification stays with jose and its
    // pinned checks. The protected header depends only on the key, so it is encoded once per key.
    const payload = base64url({
      iss: this.options.issuer,
      aud: this.options.audience,
      sub: clientId,
      scope: scopes.join(' '),
      livemode: this.options.livemode,
      iat,
      exp: iat + TOKEN_LIFETIME_SECONDS,
      jti: randomUUID(),
    });
    const signingInput = `${header}.${payload}`;
    const signature = (await signEd25519(Buffer.from(signingInput), key.privateKeyObject)).toString('base64url');
    return `${signingInput}.${signature}`;
  }

  /**
   * The grant of a token verified earlier and not yet expired, without any asynchronous step;
   * undefined when it must go through verify(). The cache is keyed by the token's signature (the
   * hash of a short key is cheaper than that of the whole token, computed anew for every request's
   * header) and an entry only answers for the exact token it was made from.
   */
  cached(token: string): AccessToken | undefined {
    const grant = this.#remembered(token);
    return grant !== undefined && grant.exp > this.clock.now().getTime() / 1000 ? grant : undefined;
  }

  /** The grant remembered for exactly this token, expired or not. */
  #remembered(token: string): AccessToken | undefined {
    const entry = this.#verified.get(token.slice(-SIGNATURE_CHARS));
    return entry !== undefined && entry.token === token ? entry.grant : undefined;
  }

  /** The token's grant, or a 401 `unauthorized` for anything that is not a valid, unexpired token of ours. */
  async verify(token: string): Promise<AccessToken> {
    const nowSeconds = this.clock.now().getTime() / 1000;
    const remembered = this.#remembered(token);
    if (remembered !== undefined) {
      if (remembered.exp > nowSeconds) return remembered;
      this.#verified.delete(token.slice(-SIGNATURE_CHARS));
      throw unauthorized('Access token expired');
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, async (header) => this.#key(header.kid), {
        algorithms: ['EdDSA'],
        issuer: this.options.issuer,
        audience: this.options.audience,
        typ: 'at+jwt',
        currentDate: this.clock.now(),
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti'],
      }));
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw unauthorized(code === 'ERR_JWT_EXPIRED' ? 'Access token expired' : 'Invalid access token');
    }
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(isScope) : [];
    if (
      payload.livemode !== this.options.livemode ||
      typeof payload.sub !== 'string' ||
      payload.exp === undefined ||
      payload.iat === undefined
    ) {
      throw unauthorized('Invalid access token');
    }
    const grant: AccessToken = {
      clientId: payload.sub as ClientId,
      scopes: new Set(scopes),
      livemode: payload.livemode === true,
      iat: payload.iat,
      exp: payload.exp,
    };
    if (this.#verified.size >= CACHE_LIMIT) this.#prune(nowSeconds);
    this.#verified.set(token.slice(-SIGNATURE_CHARS), { token, grant });
    return grant;
  }

  async #key(kid: string | undefined): Promise<SigningKey['publicKeyObject']> {
    const key = kid === undefined ? undefined : await this.keys.find('token', kid);
    if (key === undefined) throw new Error('unknown key id');
    return key.publicKeyObject;
  }

  /** Drops expired entries, then the oldest half if still full (Map keeps insertion order). */
  #prune(nowSeconds: number): void {
    for (const [key, entry] of this.#verified) if (entry.grant.exp <= nowSeconds) this.#verified.delete(key);
    if (this.#verified.size < CACHE_LIMIT) return;
    let drop = this.#verified.size / 2;
    for (const key of this.#verified.keys()) {
      if (drop-- <= 0) break;
      this.#verified.delete(key);
    }
  }
}

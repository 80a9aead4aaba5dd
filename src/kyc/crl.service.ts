import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { isoSeconds } from '../lib/clock.js';
import { validationError } from '../lib/errors.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Database } from '../storage/schema.js';
import { listRevocations, maxCrlNumber } from './attestation.repository.js';
import { signDocument } from './signing.js';

/** The list is re-issued at least this often; `next_update` is `issued_at` plus this. */
export const CRL_INTERVAL_MS = 15 * 60 * 1000;

export interface CrlDocument {
  version: '1.0';
  issuer: string;
  crl_number: number;
  base_crl_number?: number;
  issued_at: string;
  next_update: string;
  entries: { attestation_id: string; revoked_at: string; reason: string }[];
  key_id: string;
  signature: string;
}

export interface SignedCrl {
  document: CrlDocument;
  body: string;
  etag: string;
}

/**
 * The signed revocation list. Its content is a pure function of the database state, the current key
 * and the 15-minute period: `issued_at` is the start of the period, moved later only to the latest
 * revocation the list accounts for (a delta's included, even when it lists none) or the current
 * key's window start. Ed25519 signatures are deterministic, so every process of a deployment serves
 * byte-identical lists with the same ETag, and the list is re-signed (gets a new issued_at) every 15
 * minutes.
 */
export class CrlService {
  readonly #cache = new Map<string, SignedCrl>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    private readonly issuer: string,
  ) {}

  async current(since: number | null): Promise<SignedCrl> {
    const crlNumber = await maxCrlNumber(this.db);
    if (since !== null && since > crlNumber) {
      throw validationError([{ field: 'since', rule: 'maximum', value: since, message: `the list's crl_number is ${crlNumber}` }]);
    }
    const key = await this.keys.current('attestation');
    const now = this.clock.now().getTime();
    const period = now - (now % CRL_INTERVAL_MS);
    const cacheKey = `${since ?? 'full'}:${crlNumber}:${key.id}:${period}`;
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;

    // Bounded by the number read above, so that a revocation made meanwhile is not listed under it.
    const rows = await listRevocations(this.db, since ?? 0, crlNumber);
    // A list is never dated before the last revocation it accounts for, whether or not a delta's
    // entries include it (a delta from the current number has none).
    const last = since === crlNumber && crlNumber > 0 ? await listRevocations(this.db, crlNumber - 1, crlNumber) : rows;
    const lastRevocation = last.length === 0 ? 0 : Math.max(...last.map((r) => r.revoked_at));
    const issuedAt = Math.max(period, Math.ceil(lastRevocation / 1000) * 1000, key.validFrom);
    const document: CrlDocument = signDocument(
      {
        version: '1.0' as const,
        issuer: this.issuer,
        crl_number: crlNumber,
        ...(since === null ? {} : { base_crl_number: since }),
        issued_at: isoSeconds(issuedAt),
        next_update: isoSeconds(issuedAt + CRL_INTERVAL_MS),
        entries: rows.map((r) => ({ attestation_id: r.id, revoked_at: isoSeconds(r.revoked_at), reason: r.revocation_reason })),
        key_id: key.id,
      },
      key,
    );
    const body = JSON.stringify(document);
    const signed = { document, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    if (this.#cache.size > 64) this.#cache.clear();
    this.#cache.set(cacheKey, signed);
    return signed;
  }
}

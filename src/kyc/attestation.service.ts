import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { isoSeconds } from '../lib/clock.js';
import { notFound, validationError, type ErrorDetail } from '../lib/errors.js';
import { isId, newId, type ClientId } from '../lib/ids.js';
import type { KeyRing, SigningKey } from '../keys/key-ring.js';
import { recordEvent } from '../events/event.service.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import {
  findClientAttestation,
  findClientAttestationDocument,
  insertAttestation,
  markRevoked,
  maxCrlNumber,
} from './attestation.repository.js';
import type { AttestationRow, RevocationReason } from './attestation.table.js';
import type { KycAttestation, KycAttestationRequest } from './kyc.schemas.js';
import { missingVerifications } from './levels.js';
import { canonicalSha256, signDocument, signDocumentOffLoop } from './signing.js';

/** How far in the future a verification time may lie (clocks of the checking systems differ). */
export const VERIFIED_AT_SKEW_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface Revocation {
  attestation_id: string;
  revoked_at: string;
  reason: RevocationReason;
}

export interface AttestationStatus {
  attestation_id: string;
  status: 'active' | 'revoked' | 'expired';
  revoked_at: string | null;
  reason: RevocationReason | null;
}

type UnsignedAttestation = Omit<KycAttestation, 'signature'>;

/** An attestation signed by KycService.sign, to be stored by KycService.store. */
export interface SignedAttestation {
  attestation: KycAttestation;
  keyId: string;
  issuedAt: number;
  expiresAt: number;
  /** When it was built: the time of its event. */
  now: number;
}

export interface KycServiceOptions {
  issuer: string;
  validityDays: number;
  livemode: boolean;
  dialect: DialectName;
  /** How many signed documents the read endpoint keeps in memory (default DOCUMENT_CACHE_SIZE). */
  documentCacheSize?: number;
}

/** About 0.5 KB each, plus the id and the entry: a few megabytes for the whole cache (docs/performance.md, "Figures behind the code"). */
export const DOCUMENT_CACHE_SIZE = 10_000;

/**
 * Signed documents by attestation id, with the client that owns them. Both never change once
 * committed (a revocation changes the row's status, not its document; rows are never deleted), so an
 * entry needs no invalidation, also when other processes share the database. Only documents read
 * outside a transaction, so committed, are kept; the oldest entry is dropped beyond the bound.
 */
class DocumentCache {
  readonly #entries = new Map<string, { clientId: ClientId; document: string }>();
  constructor(readonly size: number) {}

  get(id: string): { clientId: ClientId; document: string } | undefined {
    return this.#entries.get(id);
  }

  set(id: string, clientId: ClientId, document: string): void {
    if (this.size <= 0) return;
    if (this.#entries.size >= this.size) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, { clientId, document });
  }

  get count(): number {
    return this.#entries.size;
  }
}

/** The business rules the schema cannot state: level requirements, unique types, times not in the future. */
export function checkAttestationRequest(request: KycAttestationRequest, now: Date): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  request.verifications.forEach((v, i) => {
    if (seen.has(v.type))
      details.push({ field: `verifications.${i}.type`, rule: 'unique', value: v.type, message: `verification ${v.type} is listed twice` });
    seen.add(v.type);
    if (Date.parse(v.verified_at) > now.getTime() + VERIFIED_AT_SKEW_MS) {
      details.push({
        field: `verifications.${i}.verified_at`,
        rule: 'not_in_future',
        value: v.verified_at,
        message: 'verified_at lies in the future',
      });
    }
  });
  for (const missing of missingVerifications(request.level, seen)) {
    details.push({
      field: 'verifications',
      rule: 'required_verification',
      value: missing,
      message: `${request.level} requires a ${missing} verification`,
    });
  }
  return details;
}

/**
 * Issues, reads and revokes KYC attestations. An attestation is signed once, stored as the exact JSON
 * that was signed, and served as stored; revocations are numbered for the revocation list.
 */
export class KycService {
  readonly #documents: DocumentCache;

  constructor(
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    private readonly options: KycServiceOptions,
  ) {
    this.#documents = new DocumentCache(options.documentCacheSize ?? DOCUMENT_CACHE_SIZE);
  }

  /** How many signed documents are held in memory (see DocumentCache). */
  get cachedDocuments(): number {
    return this.#documents.count;
  }

  /**
   * Checks the request and signs its attestation, outside any transaction: the signature is made on
   * the thread pool, and a transaction (on SQLite, the one writer) is not held while it is made.
   */
  async sign(request: KycAttestationRequest): Promise<SignedAttestation> {
    const problems = checkAttestationRequest(request, this.clock.now());
    if (problems.length > 0) throw validationError(problems);
    return this.#build(request, await this.keys.current('attestation'), signDocumentOffLoop);
  }

  /**
   * Stores a signed attestation and its `kyc.attested` event in the caller's transaction. The key is
   * read again there: if it was rotated after signing, the attestation is signed anew with the key now
   * current, so that it is never issued under a key whose window had closed.
   */
  async store(
    trx: Kysely<Database>,
    clientId: ClientId,
    request: KycAttestationRequest,
    signed: SignedAttestation,
  ): Promise<KycAttestation> {
    const key = await this.keys.current('attestation', trx);
    const { attestation, issuedAt, expiresAt, now } =
      key.id === signed.keyId ? signed : await this.#build(request, key, async (d, k) => signDocument(d, k));
    await insertAttestation(trx, {
      id: attestation.id,
      client_id: clientId,
      subject_id: attestation.subject_id,
      level: attestation.level,
      jurisdictions: JSON.stringify(attestation.jurisdictions),
      issued_at: issuedAt,
      expires_at: expiresAt,
      key_id: key.id,
      document: JSON.stringify(attestation),
      document_sha256: canonicalSha256(attestation),
      revoked_at: null,
      revocation_reason: null,
      crl_number: null,
    });
    await recordEvent(trx, {
      clientId,
      type: 'kyc.attested',
      data: attestation,
      livemode: this.options.livemode,
      at: new Date(now),
      subjectRef: attestation.id,
    });
    return attestation;
  }

  /** The attestation of `request` under `key`, signed; the key is chosen before the time is read. */
  async #build(
    request: KycAttestationRequest,
    key: SigningKey,
    signWith: (unsigned: UnsignedAttestation, key: SigningKey) => Promise<KycAttestation>,
  ): Promise<SignedAttestation> {
    // issued_at is never before the key's window: a rotation just before cannot leave the attestation
    // outside the window of the key that signed it.
    const now = this.clock.now().getTime();
    const issuedAt = Math.max(Math.floor(now / 1000) * 1000, key.validFrom);
    const expiresAt = issuedAt + this.options.validityDays * DAY_MS;
    const attestation = await signWith(
      {
        id: newId('attestation', now),
        version: '1.0' as const,
        subject_id: request.subject_id,
        level: request.level,
        issued_at: isoSeconds(issuedAt),
        expires_at: isoSeconds(expiresAt),
        issuer: this.options.issuer,
        verifications: request.verifications.map((v) => ({
          type: v.type,
          verified_at: isoSeconds(Date.parse(v.verified_at)),
          ...(v.method === undefined ? {} : { method: v.method }),
        })),
        jurisdictions: request.jurisdictions,
        key_id: key.id,
      },
      key,
    );
    return { attestation, keyId: key.id, issuedAt, expiresAt, now };
  }

  async #find(db: Kysely<Database>, clientId: ClientId, id: string): Promise<AttestationRow> {
    const row = isId('attestation', id) ? await findClientAttestation(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Attestation', id);
    return row;
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<KycAttestation> {
    return JSON.parse(await this.document(db, clientId, id)) as KycAttestation;
  }

  /**
   * The attestation exactly as it was signed and first returned, as JSON text. Documents read before
   * are answered from memory (see DocumentCache): on SQLite the lookup cost a tenth of the
   * authenticated read, and on PostgreSQL it is a round trip.
   */
  async document(db: Kysely<Database>, clientId: ClientId, id: string): Promise<string> {
    const cached = this.#documents.get(id);
    if (cached !== undefined) {
      if (cached.clientId !== clientId) throw notFound('Attestation', id);
      return cached.document;
    }
    const document = isId('attestation', id) ? await findClientAttestationDocument(db, clientId, id) : undefined;
    if (document === undefined) throw notFound('Attestation', id);
    if (!db.isTransaction) this.#documents.set(id, clientId, document);
    return document;
  }

  async status(db: Kysely<Database>, clientId: ClientId, id: string): Promise<AttestationStatus> {
    const row = await this.#find(db, clientId, id);
    const status = row.revoked_at !== null ? 'revoked' : row.expires_at <= this.clock.now().getTime() ? 'expired' : 'active';
    return {
      attestation_id: row.id,
      status,
      revoked_at: row.revoked_at === null ? null : isoSeconds(row.revoked_at),
      reason: row.revocation_reason,
    };
  }

  /**
   * Revokes once: the attestation gets the next revocation-list number and `kyc.revoked` is emitted in
   * the same transaction. Revoking again returns the first record and emits nothing.
   */
  async revoke(trx: Kysely<Database>, clientId: ClientId, id: string, reason: RevocationReason): Promise<Revocation> {
    if (!isId('attestation', id)) throw notFound('Attestation', id);
    // Numbering is serialised (the lock), and the row is read after the lock so that two concurrent
    // revocations of one attestation cannot both number it.
    await lockForTransaction(trx, this.options.dialect, 'crl');
    const row = await this.#find(trx, clientId, id);
    if (row.revoked_at !== null && row.revocation_reason !== null) {
      return { attestation_id: row.id, revoked_at: isoSeconds(row.revoked_at), reason: row.revocation_reason };
    }
    const revokedAt = Math.floor(this.clock.now().getTime() / 1000) * 1000;
    await markRevoked(trx, row.id, revokedAt, reason, (await maxCrlNumber(trx)) + 1);
    const revocation = { attestation_id: row.id, revoked_at: isoSeconds(revokedAt), reason };
    await recordEvent(trx, {
      clientId,
      type: 'kyc.revoked',
      data: { attestation_id: row.id, subject_id: row.subject_id, revoked_at: revocation.revoked_at, reason },
      livemode: this.options.livemode,
      at: this.clock.now(),
      subjectRef: row.id,
    });
    return revocation;
  }
}

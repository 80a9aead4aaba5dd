import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { canonicalize } from '@cauri/verifier';
import type { Clock } from '../lib/clock.js';
import { ApiError, validationError } from '../lib/errors.js';
import { tryLockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Transact } from '../storage/database.js';
import type { IdempotencyTable } from './idempotency.table.js';
import { deleteRecord, findRecord, insertRecord, rewriteResponse } from './idempotency.repository.js';

/** The specification's idempotency cache: 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an `in_flight` record holds its key (earlier builds claimed a key with one, in a
 * transaction of its own, before the work): a retry may take the key over once it has lapsed.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface IdempotentRequest {
  clientId: string;
  key: string | undefined;
  /** What makes two requests the same: the route and the body, compared in RFC 8785 canonical form. */
  fingerprint: unknown;
}

export interface IdempotentOutcome {
  status: number;
  /** The exact response body bytes, sent again on a replay. */
  body: string;
  replayed: boolean;
  /** The work's result (first run only). */
  result?: WorkResult;
}

/** Which status and body the work produced; `serialize` turns it into the bytes that are sent. */
export interface WorkResult {
  status: number;
  body: unknown;
}

/**
 * Idempotency for every mutating POST (decisions.md): keys are per client; a retry with the same key
 * and the same body within 24 hours gets the first response and creates nothing; another body is 422
 * `idempotency_key_reused`; the same key while the first request runs is 409. The work runs in one
 * transaction with the record, so the resource, its events and the stored response commit together.
 * A failure (any error, 4xx or 5xx) stores nothing, so the retry runs again.
 */
export class IdempotencyService {
  /** Keys (client and key) of the requests running in this process. */
  readonly #inFlight = new Set<string>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
  ) {}

  static checkKey(key: string | undefined): string {
    if (key === undefined || key === '') {
      throw validationError([{ field: 'Idempotency-Key', rule: 'required', value: null }], 'Idempotency-Key header is required (a UUID)');
    }
    if (!UUID.test(key)) throw validationError([{ field: 'Idempotency-Key', rule: 'format', value: key }], 'Idempotency-Key must be a UUID');
    return key.toLowerCase();
  }

  /**
   * The check of the key, the work and the record in one transaction, so one commit. A second
   * request with the key while the first runs gets 409: in this process from the set of keys in
   * flight here; in another process sharing the database, on PostgreSQL from a transaction-scoped
   * advisory lock on the key, taken without waiting and released when the first request's
   * transaction ends (its record is then visible, so a retry replays it), and on SQLite because
   * every writer of the database (of every process) runs one at a time, so the second waits for
   * the write lock and then finds the first's record. Nothing is stored before the work succeeds.
   * Records left `in_flight` by earlier builds are honoured until their lease lapses.
   */
  async run(request: IdempotentRequest, serialize: (result: WorkResult) => string, work: (trx: Kysely<Database>) => Promise<WorkResult>): Promise<IdempotentOutcome> {
    const key = IdempotencyService.checkKey(request.key);
    const hash = createHash('sha256').update(canonicalize(request.fingerprint)).digest('hex');
    const { clientId } = request;
    const slot = `${clientId}\u0000${key}`;
    if (this.#inFlight.has(slot)) throw inFlightConflict();
    this.#inFlight.add(slot);
    try {
      return await this.transact(async (trx) => {
        if (!(await tryLockForTransaction(trx, this.dialect, `idempotency:${clientId}:${key}`))) throw inFlightConflict();
        const now = this.clock.now().getTime();
        const existing = await findRecord(trx, clientId, key);
        if (existing !== undefined) {
          const replay = decide(existing, hash, now);
          if (replay !== null) return replay;
          await deleteRecord(trx, clientId, key);
        }
        const result = await work(trx);
        const body = serialize(result);
        await insertRecord(trx, {
          client_id: clientId,
          key,
          request_hash: hash,
          state: 'done',
          locked_until: now,
          response_status: result.status,
          response_body: body,
          created_at: now,
          expires_at: now + IDEMPOTENCY_TTL_MS,
        });
        return { status: result.status, body, replayed: false, result };
      });
    } finally {
      this.#inFlight.delete(slot);
    }
  }

  /**
   * Replaces the stored response of a completed request, in the transaction of the change that makes
   * the new response true (an order handed over within its request answers `routed`, not `created`):
   * a replay then returns what the first request actually answered.
   */
  async rewrite(trx: Kysely<Database>, clientId: string, key: string, body: string, status: number): Promise<void> {
    await rewriteResponse(trx, clientId, key.toLowerCase(), body, status);
  }
}

function inFlightConflict(): ApiError {
  return new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', { headers: { 'retry-after': '1' } });
}

/**
 * What an existing record of the key means for a new request: its stored outcome (a replay), or
 * null when the new request may take the key (the record expired, or its holder's lease lapsed);
 * throws 422 for another body and 409 while its holder still runs.
 */
function decide(existing: IdempotencyTable, hash: string, now: number): IdempotentOutcome | null {
  if (existing.expires_at <= now) return null;
  if (existing.request_hash !== hash) {
    throw validationError(
      [{ field: 'Idempotency-Key', rule: 'idempotency_key_reused', value: existing.key }],
      'This Idempotency-Key was used with a different request; use a new key for a new request',
    );
  }
  if (existing.state === 'done') return { status: existing.response_status ?? 200, body: existing.response_body ?? '', replayed: true };
  if (existing.locked_until > now) throw inFlightConflict();
  return null;
}

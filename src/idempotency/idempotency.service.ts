import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { canonicalize, JcsError } from '@cauri/verifier';
import type { EventOrigin } from '../events/origin.js';
import type { Clock } from '../lib/clock.js';
import { ApiError, validationError } from '../lib/errors.js';
import { findLoneSurrogate, loneSurrogateDetail } from '../lib/unicode.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Transact } from '../storage/database.js';
import { atCommit } from '../storage/at-commit.js';
import type { IdempotencyTable } from './idempotency.table.js';
import { completeRecord, deleteRecord, findRecord, insertRecord, lockAndFindRecord } from './idempotency.repository.js';
import { sentForm, storedForm } from './stored-response.js';

/** The specification's idempotency cache: 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a request that has committed its work but is still finishing (an order being handed to
 * its partner: at most the 2 s hand-over time-out, then the transaction applying the answer) holds
 * its key. Far longer than such a finish takes, so a live request is never taken over; when its
 * process died, a retry after this long gets the response committed with the work.
 */
export const IDEMPOTENCY_LEASE_MS = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface IdempotentRequest {
  clientId: string;
  key: string | undefined;
  /** What makes two requests the same: the route and the body, compared in RFC 8785 canonical form. */
  fingerprint: unknown;
  /** The response carries a secret shown once: its copy kept for replays is sealed. */
  sealResponse?: boolean;
  /** The request's ids and trace, stored with the events its work records (not part of the fingerprint). */
  origin?: EventOrigin;
}

export interface IdempotentOutcome {
  status: number;
  /** The exact response body bytes, sent again on a replay. */
  body: string;
  replayed: boolean;
  /** The follow-up's error, when it failed after the work committed (the response is then the committed one). */
  followUpError?: unknown;
  /** This replay made final the committed response of a request that outlived its lease (its process may have died). */
  settled?: boolean;
}

/** Which status and body the work produced; `serialize` turns it into the bytes that are sent. */
export interface WorkResult {
  status: number;
  body: unknown;
}

/**
 * Replaces the response to send, inside the transaction of the change that makes it true; `status`
 * replaces the first status too (a cancel the partner answered within the request is 200, not 202).
 */
export type Rewrite = (trx: Kysely<Database>, body: unknown, status?: number) => Promise<void>;

/** A response as sent: its status and the exact bytes of its body. */
export interface SentResponse {
  status: number;
  body: string;
}

/**
 * Work that runs after the request's transaction committed and before it answers (calling a
 * partner must not hold a transaction). It may call `rewrite` once, in the transaction of a change
 * it makes, to answer with a newer body (an order that became `routed`) and, if it says so, status.
 */
export type FollowUp = (result: WorkResult, rewrite: Rewrite) => Promise<void>;

/** A request holding its Idempotency-Key: from IdempotencyService.begin to end. */
export interface IdempotentCall {
  readonly clientId: string;
  readonly key: string;
  readonly hash: string;
  readonly sealed: boolean;
  /** Turns a status and body into the bytes sent and stored (the route's response schema). */
  readonly serialize: (result: WorkResult) => string;
  readonly slot: string;
}

/**
 * Idempotency for every mutating POST: keys are per client; a retry with the same key
 * and the same body within 24 hours gets the first response and creates nothing; another body is 422
 * `idempotency_key_reused`; the same key while the first request runs is 409. The work runs in one
 * transaction with the record, so the resource, its events and the stored response commit together.
 * A failure (any error, 4xx or 5xx) stores nothing, so the retry runs again.
 */
export class IdempotencyService {
  /** Keys (client and key) of the requests running in this process, follow-ups included. */
  readonly #inFlight = new Set<string>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
    /** 32 bytes, derived from the master key for this purpose only: seals responses that carry a secret. */
    private readonly secretKey: Buffer,
  ) {}

  static checkKey(key: string | undefined): string {
    if (key === undefined || key === '') {
      throw validationError([{ field: 'Idempotency-Key', rule: 'required', value: null }], 'Idempotency-Key header is required (a UUID)');
    }
    if (!UUID.test(key))
      throw validationError([{ field: 'Idempotency-Key', rule: 'format', value: key }], 'Idempotency-Key must be a UUID');
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
   *
   * With a `followUp`, the record is committed `in_flight` (holding the response the work gave) and
   * becomes `done` with the response finally sent, once the follow-up has finished: until then every
   * other request with the key gets 409, so a replay never sees a response the first request did not
   * give. If the follow-up fails, the response committed with the work is the one sent and stored,
   * and the error is returned in `followUpError`.
   */
  async run(
    request: IdempotentRequest,
    serialize: (result: WorkResult) => string,
    work: (trx: Kysely<Database>) => Promise<WorkResult>,
    followUp?: FollowUp,
  ): Promise<IdempotentOutcome> {
    const call = this.begin(request, serialize);
    try {
      let result: WorkResult | undefined;
      const outcome = await this.transact(async (trx): Promise<IdempotentOutcome> => {
        const replay = await this.claim(trx, call);
        if (replay !== null) return replay;
        result = await work(trx);
        return this.record(trx, call, result, { final: followUp === undefined });
      });
      if (outcome.replayed || followUp === undefined || result === undefined) return outcome;
      const followed = await this.#follow(call, { status: outcome.status, body: outcome.body }, result, followUp);
      return {
        ...outcome,
        status: followed.status,
        body: followed.body,
        ...(followed.error === undefined ? {} : { followUpError: followed.error }),
      };
    } finally {
      this.end(call);
    }
  }

  /**
   * The steps of `run`, for a use case that takes them itself (an order's: its transaction, then the
   * partner, then the final answer). `begin` checks the key and holds it in this process (409 while
   * another request of this process holds it); `end` releases it, in a `finally`.
   */
  begin(request: IdempotentRequest, serialize: (result: WorkResult) => string): IdempotentCall {
    const key = IdempotencyService.checkKey(request.key);
    const hash = fingerprintHash(request.fingerprint);
    const call: IdempotentCall = {
      clientId: request.clientId,
      key,
      hash,
      sealed: request.sealResponse === true,
      serialize,
      slot: `${request.clientId}\u0000${key}`,
    };
    if (this.#inFlight.has(call.slot)) throw inFlightConflict();
    this.#inFlight.add(call.slot);
    return call;
  }

  end(call: IdempotentCall): void {
    this.#inFlight.delete(call.slot);
  }

  /**
   * First step in the request's transaction: the stored answer to replay (or settle) when the key was
   * used before, or null when the request is new and its work should run. Throws 409 while another
   * process holds the key, and 422 for the key reused with another body.
   */
  async claim(trx: Kysely<Database>, call: IdempotentCall): Promise<IdempotentOutcome | null> {
    const { locked, record: existing } = await lockAndFindRecord(
      trx,
      this.dialect,
      `idempotency:${call.clientId}:${call.key}`,
      call.clientId,
      call.key,
    );
    if (!locked) throw inFlightConflict();
    const now = this.clock.now().getTime();
    if (existing === undefined) return null;
    const decision = decide(existing, call.hash, now);
    if (decision === 'replay') return this.#replay(existing);
    if (decision === 'settle') return { ...this.#replay(await this.#settleAbandoned(trx, existing)), settled: true };
    await deleteRecord(trx, call.clientId, call.key);
    return null;
  }

  /**
   * Last step in the request's transaction: stores the response the work gave. `final: false` keeps
   * the key in flight (409 to every other request) until `finish` or `finishAsCommitted` stores the
   * response finally sent.
   */
  async record(
    trx: Kysely<Database>,
    call: IdempotentCall,
    result: WorkResult,
    options: { final: boolean; atCommit?: boolean },
  ): Promise<IdempotentOutcome> {
    const now = this.clock.now().getTime();
    const body = call.serialize(result);
    const row: IdempotencyTable = {
      client_id: call.clientId,
      key: call.key,
      request_hash: call.hash,
      state: options.final ? 'done' : 'in_flight',
      locked_until: options.final ? now : now + IDEMPOTENCY_LEASE_MS,
      response_status: result.status,
      response_body: storedForm(this.secretKey, call.clientId, call.key, body, call.sealed),
      created_at: now,
      expires_at: now + IDEMPOTENCY_TTL_MS,
    };
    // `atCommit`: written together with the transaction's COMMIT (see storage/at-commit.ts).
    if (options.atCommit === true) atCommit(trx, () => insertRecord(trx, row));
    else await insertRecord(trx, row);
    return { status: result.status, body, replayed: false };
  }

  /**
   * Makes `result` the final response of the in-flight key, in the transaction of the change it
   * reports; returns the response to send (the one stored, see #complete).
   */
  async finish(trx: Kysely<Database>, call: IdempotentCall, result: WorkResult): Promise<SentResponse> {
    return this.#complete(trx, call.clientId, call.key, call.sealed, { status: result.status, body: call.serialize(result) });
  }

  /**
   * `finish`, with the key's record completed together with the transaction's COMMIT (see atCommit):
   * the promise settles after the commit (await it only then) with the response to send.
   */
  finishAtCommit(trx: Kysely<Database>, call: IdempotentCall, result: WorkResult): Promise<SentResponse> {
    const response: SentResponse = { status: result.status, body: call.serialize(result) };
    const stored = storedForm(this.secretKey, call.clientId, call.key, response.body, call.sealed);
    const answered = atCommit(trx, () => completeRecord(trx, call.clientId, call.key, response.status, stored)).then(async (completed) => {
      if (completed) return response;
      // No longer in flight (a retry settled it after the lease lapsed): what it stored is final.
      const record = await findRecord(this.db, call.clientId, call.key);
      if (record?.response_body == null) return response;
      return {
        status: record.response_status ?? response.status,
        body: sentForm(this.secretKey, call.clientId, call.key, record.response_body),
      };
    });
    answered.catch(() => undefined);
    return answered;
  }

  /** Makes the response committed with the work final (nothing newer to answer), in a transaction of its own. */
  async finishAsCommitted(call: IdempotentCall, committed: SentResponse): Promise<SentResponse> {
    return this.transact((trx) => this.#complete(trx, call.clientId, call.key, call.sealed, committed));
  }

  /**
   * Runs the follow-up and completes the record; returns the status and body to send, which are the
   * ones stored. A failed follow-up is returned with the body, not thrown: the work committed, and
   * its response is what the request answers.
   */
  async #follow(
    call: IdempotentCall,
    committed: SentResponse,
    result: WorkResult,
    followUp: FollowUp,
  ): Promise<SentResponse & { error?: unknown }> {
    let rewritten: SentResponse | undefined;
    try {
      await followUp(result, async (trx, newBody, newStatus = result.status) => {
        rewritten = await this.finish(trx, call, { status: newStatus, body: newBody });
      });
    } catch (error) {
      // The transaction that rewrote the response may not have committed: the stored record decides.
      return { ...(await this.finishAsCommitted(call, committed)), error };
    }
    return rewritten ?? (await this.finishAsCommitted(call, committed));
  }

  /**
   * Makes `body` the final response of an in-flight record and returns it; when the record is no
   * longer in flight (a retry settled it after the lease lapsed), returns the response it holds, so
   * that both requests answer the same.
   */
  async #complete(trx: Kysely<Database>, clientId: string, key: string, sealed: boolean, response: SentResponse): Promise<SentResponse> {
    if (await completeRecord(trx, clientId, key, response.status, storedForm(this.secretKey, clientId, key, response.body, sealed)))
      return response;
    const record = await findRecord(trx, clientId, key);
    if (record?.response_body == null) return response;
    return { status: record.response_status ?? response.status, body: sentForm(this.secretKey, clientId, key, record.response_body) };
  }

  /** An in-flight record whose holder's lease lapsed: its committed response becomes the final one. */
  async #settleAbandoned(trx: Kysely<Database>, record: IdempotencyTable): Promise<IdempotencyTable> {
    if (await completeRecord(trx, record.client_id, record.key, record.response_status ?? 200, record.response_body ?? '')) return record;
    // Completed meanwhile by its holder: what it stored is final.
    return (await findRecord(trx, record.client_id, record.key)) ?? record;
  }

  #replay(record: IdempotencyTable): IdempotentOutcome {
    return {
      status: record.response_status ?? 200,
      body: sentForm(this.secretKey, record.client_id, record.key, record.response_body ?? ''),
      replayed: true,
    };
  }
}

/**
 * SHA-256 of the fingerprint's RFC 8785 form. A string holding a lone surrogate has no such form
 * (the HTTP edge refuses those first, naming the body's field); here it is a 422 naming its path in
 * the fingerprint, never an unhandled error.
 */
function fingerprintHash(fingerprint: unknown): string {
  let text: string;
  try {
    text = canonicalize(fingerprint);
  } catch (error) {
    const found = error instanceof JcsError && error.code === 'lone_surrogate' ? findLoneSurrogate(fingerprint) : null;
    if (found === null) throw error;
    throw validationError([loneSurrogateDetail(found, 'fingerprint')], 'Text must be valid Unicode: a string holds a lone surrogate');
  }
  return createHash('sha256').update(text).digest('hex');
}

function inFlightConflict(): ApiError {
  return new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', {
    headers: { 'retry-after': '1' },
  });
}

/**
 * What an existing record of the key means for a new request: replay its stored response; settle it
 * (its holder committed the work but its lease lapsed: the committed response becomes final, then
 * is replayed); or take the key (the record expired, or a holder that stored no response lapsed).
 * Throws 422 for another body and 409 while its holder still runs.
 */
function decide(existing: IdempotencyTable, hash: string, now: number): 'replay' | 'settle' | 'take' {
  if (existing.expires_at <= now) return 'take';
  if (existing.request_hash !== hash) {
    throw validationError(
      [{ field: 'Idempotency-Key', rule: 'idempotency_key_reused', value: existing.key }],
      'This Idempotency-Key was used with a different request; use a new key for a new request',
    );
  }
  if (existing.state === 'done') return 'replay';
  if (existing.locked_until > now) throw inFlightConflict();
  return existing.response_body === null ? 'take' : 'settle';
}

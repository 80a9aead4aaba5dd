import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { envelopeOf } from '../events/event.service.js';
import type { EventRow } from '../events/event.table.js';
import type { Clock } from '../lib/clock.js';
import type { DialectName } from '../storage/dialect.js';
import { transaction } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import { serializeEnvelope } from './core/payload.js';
import { nextAttemptAt } from './core/schedule.js';
import { signatureHeader } from './core/signature.js';
import {
  dueCandidates,
  dueCandidatesBounded,
  findMessages,
  hasPendingEvents,
  insertDeliveries,
  insertMessages,
  leaseDeliveries,
  leasedPerEndpoint,
  lockPendingEvents,
  markEventsDispatched,
  recordAttempt,
  settleWithoutAttempt,
} from './delivery.repository.js';
import { findEndpoints, subscribableEndpoints } from './endpoint.repository.js';
import { newDeliveryRow } from './endpoint.service.js';
import type { EndpointSecrets } from './secrets.js';
import type { WebhookSender } from './sender.js';
import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow, WebhookMessageTable } from './webhook.table.js';

/** Attempts recorded in one transaction at most (see #record). */
const RECORD_BATCH = 256;
/** While deliveries keep coming, look for new events this often rather than every poll period. */
const BUSY_POLL_MS = 20;
/** How long after the last work the worker keeps looking every BUSY_POLL_MS. */
const BUSY_WINDOW_MS = 2_000;
/**
 * Free slots that make an ending attempt start a new claim: one claim (a scan of the due index, a
 * count of leases, a lease transaction) then fills many slots, rather than one claim per attempt.
 */
const REFILL_SLOTS = 16;

/** An attempt waiting to be recorded with the others that completed meanwhile. */
interface PendingRecord {
  attemptsBefore: number;
  changes: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'next_attempt_at' | 'last_attempt_at' | 'updated_at'>;
  attempt: WebhookAttemptRow;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

export interface DeliveryWorkerOptions {
  /** This process, as the holder of leases. */
  owner: string;
  /** How long a claimed delivery stays reserved; must exceed the attempt timeout by a wide margin. */
  leaseMs: number;
  /** Attempts in flight per endpoint, across every worker sharing the database. */
  perEndpointConcurrency: number;
  /** Attempts in flight in this process. */
  maxInFlight: number;
  /** Background loop period. */
  pollIntervalMs: number;
  /** Events fanned out per transaction. */
  dispatchBatch: number;
  /** Source of the schedule's jitter (Math.random; a constant in tests). */
  random: () => number;
  /** Header brand: `cauri` gives X-Cauri-Signature and Cauri-Webhooks/1.0. */
  serviceName: string;
}

/** What one database step of the worker handled (its units) and the wall time it took, in seconds. */
export interface StepFigures {
  units: number;
  seconds: number;
}

/**
 * What the worker has done since it was created, for /metrics and the benchmark. Each step's time is
 * the wall time of its database work (the whole transaction, commit included; on PostgreSQL the
 * round trips too), so seconds divided by units is what one unit of the step costs.
 */
export interface DeliveryWorkerStats {
  /** Events fanned out, and the fan-out transactions' time. */
  fanOut: StepFigures;
  /** Deliveries leased, and the claims' time: the due scan, the lease transaction, the reads of endpoints and bodies. */
  claim: StepFigures;
  /** Attempts recorded with their delivery's new state, and the recording transactions' time. */
  record: StepFigures;
  /** Attempts made, by outcome: a 2xx, or anything else (status, timeout, refusal, network error). */
  attempts: { succeeded: number; failed: number };
}

export interface RunReport {
  /** Events fanned out. */
  dispatched: number;
  /** Attempts made. */
  attempted: number;
}

/** The delivery's state after an attempt: pure, from the schedule (core/schedule.ts). */
export function afterAttempt(
  delivery: Pick<WebhookDeliveryRow, 'attempts' | 'first_attempt_at'>,
  succeeded: boolean,
  random: () => number,
): { status: DeliveryStatus; attempts: number; next_attempt_at: number | null } {
  const attempts = delivery.attempts + 1;
  if (succeeded) return { status: 'succeeded', attempts, next_attempt_at: null };
  // A replayed delivery has used up the schedule already, so its failed attempt leaves it dead again.
  const next = nextAttemptAt(delivery.first_attempt_at, attempts, random);
  return next === null ? { status: 'dead', attempts, next_attempt_at: null } : { status: 'pending', attempts, next_attempt_at: next };
}

function brand(serviceName: string): string {
  return serviceName
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-');
}

/**
 * The delivery loop, in two steps that share nothing but the database:
 * 1. fan-out: each stored event not yet dispatched becomes one delivery per subscribed endpoint, with
 *    its body serialised once, in one transaction with marking the event dispatched;
 * 2. sending: due deliveries are leased in a short transaction, then sent without holding it; each
 *    attempt and the delivery's next state are recorded together.
 * Several workers may run against one PostgreSQL database: SKIP LOCKED and leases keep them from
 * fanning out one event twice or sending one attempt twice. No send is awaited before others start,
 * and the per-endpoint limit keeps a slow or dead receiver from taking every slot.
 */
export class DeliveryWorker {
  readonly stats: DeliveryWorkerStats = {
    fanOut: { units: 0, seconds: 0 },
    claim: { units: 0, seconds: 0 },
    record: { units: 0, seconds: 0 },
    attempts: { succeeded: 0, failed: 0 },
  };
  readonly #inflight = new Set<Promise<void>>();
  #records: PendingRecord[] = [];
  #recording = false;
  #soon: NodeJS.Timeout | null = null;
  #lastWork = -Infinity;
  readonly #headers: { signature: string; idempotency: string; userAgent: string };
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #again = false;
  #running = false;
  #stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly secrets: EndpointSecrets,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    const b = brand(options.serviceName);
    this.#headers = { signature: `x-${options.serviceName}-signature`, idempotency: `x-${options.serviceName}-idempotency-key`, userAgent: `${b}-Webhooks/1.0` };
  }

  // ----- Fan-out ----------------------------------------------------------------------------------

  /** Fans out one batch of pending events; returns how many events it took (0: none left). */
  async fanOut(): Promise<number> {
    // Most turns find nothing to fan out: a read says so without opening a write transaction.
    if (!(await hasPendingEvents(this.db))) return 0;
    const started = performance.now();
    const n = await this.db.transaction().execute(async (trx) => {
      const events = await lockPendingEvents(trx, this.dialect, this.options.dispatchBatch);
      if (events.length === 0) return 0;
      const now = this.clock.now().getTime();
      const clientIds = [...new Set(events.flatMap((e) => (e.client_id === null ? [] : [e.client_id])))];
      const allClients = events.some((e) => e.client_id === null);
      const latest = Math.max(...events.map((e) => e.created_at));
      const endpoints = (await subscribableEndpoints(trx, clientIds, allClients, latest)).map((e) => ({ ...e, types: new Set(JSON.parse(e.events) as string[]) }));
      const messages: WebhookMessageTable[] = [];
      const deliveries: WebhookDeliveryRow[] = [];
      for (const event of events) {
        // An endpoint receives the events created after it, not the backlog from before it existed.
        const targets = endpoints.filter((e) => (event.client_id === null || e.client_id === event.client_id) && e.types.has(event.type) && e.created_at <= event.created_at);
        if (targets.length === 0) continue;
        messages.push({ event_id: event.id, body: this.#body(event), created_at: now });
        for (const endpoint of targets) deliveries.push(newDeliveryRow(event, endpoint, now));
      }
      await insertMessages(trx, messages);
      await insertDeliveries(trx, deliveries);
      await markEventsDispatched(trx, events.map((e) => e.id), now);
      return events.length;
    });
    this.#count(this.stats.fanOut, n, started);
    return n;
  }

  #count(step: StepFigures, units: number, started: number): void {
    step.units += units;
    step.seconds += (performance.now() - started) / 1000;
  }

  #body(event: EventRow): string {
    const envelope = envelopeOf(event);
    return serializeEnvelope({ ...envelope, data: envelope.data });
  }

  // ----- Sending ----------------------------------------------------------------------------------

  /** Leases due deliveries within this process's free slots and starts their attempts; returns them. */
  async #claimAndLaunch(): Promise<Promise<void>[]> {
    const capacity = this.options.maxInFlight - this.#inflight.size;
    if (capacity <= 0) return [];
    const started = performance.now();
    const now = this.clock.now().getTime();
    const { perEndpointConcurrency } = this.options;
    // The earliest due deliveries first, without reading the whole backlog; the full query only when
    // an endpoint with free slots may have due deliveries beyond that scan (so none waits behind
    // another endpoint's backlog).
    const bounded = await dueCandidatesBounded(this.db, now, perEndpointConcurrency, capacity * 2, Math.max(256, capacity * 16));
    const busy = await leasedPerEndpoint(this.db, now);
    let candidates = bounded.rows;
    if (bounded.truncated) {
      const seen = new Set(candidates.map((c) => c.endpoint_id));
      const others = [...bounded.enabled].some((id) => !seen.has(id) && (busy.get(id) ?? 0) < perEndpointConcurrency);
      if (others || candidates.length === 0) candidates = await dueCandidates(this.db, now, perEndpointConcurrency, capacity * 2);
    }
    if (candidates.length === 0) return [];
    const chosen: string[] = [];
    for (const candidate of candidates) {
      const n = busy.get(candidate.endpoint_id) ?? 0;
      if (n >= perEndpointConcurrency) continue;
      busy.set(candidate.endpoint_id, n + 1);
      chosen.push(candidate.id);
      if (chosen.length >= capacity) break;
    }
    const leased = await leaseDeliveries(this.db, this.dialect, chosen, now, this.options.leaseMs, this.options.owner);
    if (leased.length === 0) return [];
    const endpoints = new Map((await findEndpoints(this.db, [...new Set(leased.map((d) => d.endpoint_id))])).map((e) => [e.id, e]));
    const bodies = await findMessages(this.db, [...new Set(leased.map((d) => d.event_id))]);
    this.#count(this.stats.claim, leased.length, started);
    return leased.map((delivery) => this.#track(this.#attempt(delivery, endpoints.get(delivery.endpoint_id), bodies.get(delivery.event_id))));
  }

  #track(work: Promise<void>): Promise<void> {
    const tracked = work
      .catch((error: unknown) => this.log.error({ err: error }, 'webhook attempt failed to complete'))
      .finally(() => {
        this.#inflight.delete(tracked);
        // Freed slots, or an immediate retry that is now due: look again without waiting a period,
        // once enough slots are free for the claim to be worth it (or nothing else is in flight).
        const free = this.options.maxInFlight - this.#inflight.size;
        if (this.#running && (free >= Math.min(REFILL_SLOTS, this.options.maxInFlight) || this.#inflight.size === 0)) this.#kick();
      });
    this.#inflight.add(tracked);
    return tracked;
  }

  async #attempt(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow | undefined, body: string | undefined): Promise<void> {
    const { owner } = this.options;
    if (endpoint === undefined || endpoint.deleted_at !== null) {
      const now = this.clock.now().getTime();
      await settleWithoutAttempt(this.db, delivery.id, owner, { status: 'cancelled', next_attempt_at: null, updated_at: now });
      return;
    }
    if (endpoint.disabled === 1 || body === undefined) {
      // Disabled since the claim: the delivery waits, due, until the endpoint is enabled again.
      if (body === undefined) this.log.error({ delivery: delivery.id, event: delivery.event_id }, 'webhook body missing');
      await settleWithoutAttempt(this.db, delivery.id, owner, {});
      return;
    }
    const attemptedAt = this.clock.now().getTime();
    const secrets = [this.secrets.open(endpoint.id, endpoint.secret_sealed)];
    if (endpoint.previous_secret_sealed !== null && (endpoint.previous_secret_expires_at ?? 0) > attemptedAt) {
      secrets.push(this.secrets.open(endpoint.id, endpoint.previous_secret_sealed));
    }
    // Signed anew for every attempt (a fresh `t`), over the body bytes stored at fan-out.
    const headers = {
      'content-type': 'application/json',
      [this.#headers.signature]: signatureHeader(secrets, Math.floor(attemptedAt / 1000), body),
      [this.#headers.idempotency]: delivery.idempotency_key,
      'user-agent': this.#headers.userAgent,
    };
    const result = await this.sender.send({ url: endpoint.url, headers, body });
    if (result.error === null) this.stats.attempts.succeeded++;
    else this.stats.attempts.failed++;
    const next = afterAttempt(delivery, result.error === null, this.options.random);
    const recorded = await this.#record(
      delivery.attempts,
      { ...next, last_attempt_at: attemptedAt, updated_at: this.clock.now().getTime() },
      { delivery_id: delivery.id, seq: next.attempts, attempted_at: attemptedAt, status_code: result.statusCode, duration_ms: result.durationMs, error: result.error },
    );
    if (!recorded) this.log.warn({ delivery: delivery.id }, 'webhook lease lapsed before the attempt was recorded');
  }

  /**
   * Records an attempt and the delivery's new state; resolves once committed (false: the lease had
   * lapsed, nothing written). Attempts that complete while a commit is under way are recorded
   * together in the next transaction, so that a durable commit (an fsync on SQLite) is shared by
   * many attempts rather than paid by each. If that transaction fails, each is recorded alone, so
   * that one bad record does not take the others with it.
   */
  #record(attemptsBefore: number, changes: PendingRecord['changes'], attempt: WebhookAttemptRow): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#records.push({ attemptsBefore, changes, attempt, resolve, reject });
      if (!this.#recording) void this.#drainRecords();
    });
  }

  async #drainRecords(): Promise<void> {
    this.#recording = true;
    const { owner } = this.options;
    try {
      while (this.#records.length > 0) {
        // One turn of the event loop, so that the attempts completing in it join this batch.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const batch = this.#records.splice(0, RECORD_BATCH);
        let outcomes: boolean[];
        const started = performance.now();
        try {
          outcomes = await transaction(this.db, async (trx) => {
            const out: boolean[] = [];
            for (const r of batch) out.push(await recordAttempt(trx, owner, r.attemptsBefore, r.changes, r.attempt));
            return out;
          });
          this.#count(this.stats.record, batch.length, started);
        } catch {
          for (const r of batch) {
            try {
              r.resolve(await transaction(this.db, (trx) => recordAttempt(trx, owner, r.attemptsBefore, r.changes, r.attempt)));
            } catch (error) {
              r.reject(error);
            }
          }
          continue;
        }
        batch.forEach((r, i) => r.resolve(outcomes[i] === true));
      }
    } finally {
      this.#recording = false;
    }
  }

  // ----- Loop -------------------------------------------------------------------------------------

  /**
   * One deterministic pass, for tests and the command line: fans out every pending event, starts
   * every due attempt the limits allow, and waits for those attempts to be recorded.
   */
  async runOnce(): Promise<RunReport> {
    let dispatched = 0;
    for (;;) {
      const n = await this.fanOut();
      dispatched += n;
      if (n < this.options.dispatchBatch) break;
    }
    const started = await this.#claimAndLaunch();
    await Promise.all(started);
    return { dispatched, attempted: started.length };
  }

  /** One background step: a few fan-out batches, then start what is due; attempts are not awaited. */
  async #tick(): Promise<void> {
    let dispatched = 0;
    for (let i = 0; i < 4; i++) {
      const n = await this.fanOut();
      dispatched += n;
      if (n < this.options.dispatchBatch) break;
    }
    const launched = await this.#claimAndLaunch();
    if (dispatched > 0 || launched.length > 0) this.#lastWork = performance.now();
  }

  /**
   * After a tick with nothing left to start: while events have been coming in, look again shortly,
   * not a whole poll period later, so that an event recorded just after a tick does not wait for
   * the period (attempts in flight kick the loop themselves when they end).
   */
  #pollSoon(): void {
    if (!this.#running || this.#soon !== null || this.#inflight.size > 0) return;
    if (performance.now() - this.#lastWork > BUSY_WINDOW_MS || BUSY_POLL_MS >= this.options.pollIntervalMs) return;
    this.#soon = setTimeout(() => {
      this.#soon = null;
      this.#kick();
    }, BUSY_POLL_MS);
    this.#soon.unref();
  }

  #kick(): void {
    if (this.#ticking !== null) {
      this.#again = true;
      return;
    }
    this.#ticking = this.#tick()
      .catch((error: unknown) => this.log.error({ err: error }, 'webhook delivery tick failed'))
      .finally(() => {
        this.#ticking = null;
        if (this.#again && this.#running) {
          this.#again = false;
          setImmediate(() => this.#kick());
        } else {
          this.#pollSoon();
        }
      });
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#timer = setInterval(() => this.#kick(), this.options.pollIntervalMs);
    this.#timer.unref();
    this.#kick();
  }

  /** Stops the loop, waits for attempts in flight (each bounded by the timeout) and closes the sender. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#running = false;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#soon !== null) clearTimeout(this.#soon);
    this.#soon = null;
    while (this.#ticking !== null) await this.#ticking;
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
    await this.sender.close();
  }
}

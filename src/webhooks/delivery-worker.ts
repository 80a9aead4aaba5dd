import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { EventRow } from '../events/event.table.js';
import { deliveryTrace } from '../events/origin.js';
import type { Clock } from '../lib/clock.js';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { transaction } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import { storedEnvelopeBody } from './core/payload.js';
import { nextAttemptAt } from './core/schedule.js';
import { signatureHeader } from './core/signature.js';
import {
  countUnlisted,
  dequeueEvents,
  dueCandidates,
  dueCandidatesBounded,
  findEvents,
  findMessagesWithOrigins,
  hasDueDeliveries,
  hasPendingEvents,
  insertDeliveries,
  insertMessages,
  leaseDeliveries,
  leasedPerEndpoint,
  lockPendingEvents,
  markListed,
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
/** Fan-out rounds in one combined transaction at most. */
const FAN_OUT_ROUNDS = 4;

/** An attempt waiting to be recorded with the others that completed meanwhile. */
interface PendingRecord {
  attemptsBefore: number;
  changes: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'next_attempt_at' | 'last_attempt_at' | 'updated_at'>;
  attempt: WebhookAttemptRow;
  /** The body, to be stored with the record: the attempt failed and its body was not stored yet. */
  message: WebhookMessageTable | null;
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
  /**
   * SQLite: deliveries added to their clients' listing index in one transaction, when this many
   * wait (and whatever waits once the worker is idle); see #batchListing.
   */
  listBatch: number;
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
  /** Deliveries added to their clients' listing index in batches (SQLite), and the time it took. */
  list: StepFigures;
  /**
   * The running worker's combined transactions (see DeliveryWorker): how many committed, and the time
   * of their begin and commit, which the steps above share there and do not include.
   */
  commit: StepFigures;
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

/** A leased delivery with what its attempt needs, ready to start once its lease has committed. */
interface Launch {
  delivery: WebhookDeliveryRow;
  endpoint: WebhookEndpointRow | undefined;
  body: string | undefined;
  /** Whether the body is stored (webhook_messages); if not, a failed attempt stores it with its record. */
  stored: boolean;
  /** The API request the event came from (events.origin), for the attempt's trace headers. */
  origin: string | null;
}

/** Slots a combined transaction may still lease: in this process, and per endpoint across workers. */
interface Slots {
  free: number;
  busy: Map<string, number>;
}

/**
 * The delivery loop. Each stored event becomes one delivery per subscribed endpoint (its fan-out, with
 * the body serialised once and the event taken off the fan-out queue); due deliveries are leased, sent without
 * holding any transaction, and each attempt is recorded with the delivery's next state.
 *
 * While the worker runs, these steps share one transaction per turn: the attempts that ended since the
 * last one are recorded, the slots they freed are filled with due deliveries (retries, replays, test
 * events, deliveries that waited for their endpoint), and what is still free with new events, whose
 * deliveries are inserted already leased. One durable commit per turn, and a new event is sent with
 * the endpoint and body the fan-out has in hand. Events are taken only as far as slots are free, so
 * a backlog stays in the event queue, not as a backlog of leasable rows.
 *
 * Several workers may run against one PostgreSQL database: SKIP LOCKED and leases keep them from
 * fanning out one event twice or sending one attempt twice. No send is awaited before others start,
 * and the per-endpoint limit keeps a slow or dead receiver from taking every slot. `runOnce` runs the
 * same steps one after the other, each in its own transaction, for tests and the command line.
 */
export class DeliveryWorker {
  readonly stats: DeliveryWorkerStats = {
    fanOut: { units: 0, seconds: 0 },
    claim: { units: 0, seconds: 0 },
    record: { units: 0, seconds: 0 },
    list: { units: 0, seconds: 0 },
    commit: { units: 0, seconds: 0 },
    attempts: { succeeded: 0, failed: 0 },
  };
  readonly #inflight = new Set<Promise<void>>();
  #records: PendingRecord[] = [];
  /** The loop of combined transactions is under way (it also records attempts when the worker is stopped). */
  #pumping = false;
  /** Something asked for due deliveries and new events to be looked for (start, the timer, an idle turn). */
  #claimWanted = false;
  /**
   * Due deliveries may be waiting: the last claim left some (their endpoints were at their limit, or
   * the scan was cut short), or this worker has since made some (a failed attempt's retry, a delivery
   * inserted without a slot). A turn scans for due deliveries only then, or when a claim is wanted:
   * the timer's period bounds how late one made due by another process (a replay, a test event, a
   * lapsed lease of a worker that died) is seen while this worker is busy.
   */
  #mayBeDue = true;
  #soon: NodeJS.Timeout | null = null;
  #lastWork = -Infinity;
  readonly #headers: { signature: string; idempotency: string; userAgent: string };
  #timer: NodeJS.Timeout | null = null;
  /** The loop's current run, while #pumping. */
  #pumped: Promise<void> = Promise.resolve();
  #running = false;
  #stopped = false;
  /**
   * On SQLite the running worker creates its deliveries unlisted and adds them to their clients'
   * listing index in batches (migration 2026-11-24T15-00): that index has a page per client, which
   * every commit would otherwise write again. PostgreSQL writes index entries, not pages, to its log,
   * and several workers share it, so there every delivery is created listed.
   */
  readonly #batchListing: boolean;
  /** Deliveries waiting to be listed, as far as this worker knows; null until counted. */
  #unlisted: number | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly secrets: EndpointSecrets,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.#batchListing = dialectOf(dialect).singleWriter;
    const b = brand(options.serviceName);
    this.#headers = { signature: `x-${options.serviceName}-signature`, idempotency: `x-${options.serviceName}-idempotency-key`, userAgent: `${b}-Webhooks/1.0` };
  }

  // ----- Fan-out ----------------------------------------------------------------------------------

  /** Fans out one batch of pending events in a transaction of its own; returns how many events it took (0: none left). */
  async fanOut(): Promise<number> {
    // Most turns find nothing to fan out: a read says so without opening a write transaction.
    if (!(await hasPendingEvents(this.db))) return 0;
    const started = performance.now();
    const { events } = await transaction(this.db, (trx) => this.#fanOutIn(trx, this.options.dispatchBatch, this.clock.now().getTime(), null));
    this.#count(this.stats.fanOut, events, started);
    return events;
  }

  /**
   * Fans out up to `limit` pending events in `trx`. With `slots`, each delivery that fits in them is
   * inserted already leased to this worker and returned to be launched after the commit, and events
   * are taken only while slots are free; without, every delivery is inserted due and unleased.
   * `unlisted`: deliveries inserted without their listing entry (see #batchListing).
   */
  async #fanOutIn(trx: Kysely<Database>, limit: number, now: number, slots: Slots | null): Promise<{ events: number; launches: Launch[]; unlisted: number }> {
    const locked = await lockPendingEvents(trx, this.dialect, limit);
    if (locked.length === 0) return { events: 0, launches: [], unlisted: 0 };
    // Only the running worker (with slots) lists its deliveries later, in its combined transactions.
    const deferListing = slots !== null && this.#batchListing;
    const clientIds = [...new Set(locked.flatMap((e) => (e.client_id === null ? [] : [e.client_id])))];
    const allClients = locked.some((e) => e.client_id === null);
    const latest = Math.max(...locked.map((e) => e.created_at));
    const endpoints = (await subscribableEndpoints(trx, clientIds, allClients, latest)).map((e) => ({ row: e, types: new Set(JSON.parse(e.events) as string[]) }));
    const { perEndpointConcurrency, leaseMs, owner } = this.options;
    const messages: WebhookMessageTable[] = [];
    const deliveries: WebhookDeliveryRow[] = [];
    const launches: Launch[] = [];
    const taken: string[] = [];
    for (const event of locked) {
      // Events wait in order for free slots; locked ones left here are released at the commit.
      if (slots !== null && slots.free <= 0) break;
      taken.push(event.id);
      // An endpoint receives the events created after it, not the backlog from before it existed.
      const targets = endpoints.filter(({ row, types }) => (event.client_id === null || row.client_id === event.client_id) && types.has(event.type) && row.created_at <= event.created_at);
      if (targets.length === 0) continue;
      const body = this.#body(event);
      const leased: Launch[] = [];
      for (const { row: endpoint } of targets) {
        const delivery = newDeliveryRow(event, endpoint, now);
        if (deferListing) delivery.listed = 0;
        const busy = slots?.busy.get(endpoint.id) ?? 0;
        if (slots !== null && slots.free > 0 && busy < perEndpointConcurrency) {
          // Leased as it is created: nothing else can see it before the commit, so no lease step.
          delivery.lease_until = now + leaseMs;
          delivery.lease_owner = owner;
          slots.free--;
          slots.busy.set(endpoint.id, busy + 1);
          leased.push({ delivery, endpoint, body, stored: false, origin: event.origin ?? null });
        } else if (slots !== null) {
          // Its endpoint is at its limit: it waits, due, for a claim.
          this.#mayBeDue = true;
        }
        deliveries.push(delivery);
      }
      // The body is stored for the deliveries that wait to be claimed; one whose first attempt starts
      // at once carries it in memory, and stores it only if that attempt fails (most succeed).
      if (leased.length < targets.length) {
        messages.push({ event_id: event.id, body, created_at: now });
        for (const launch of leased) launch.stored = true;
      }
      for (const launch of leased) launches.push(launch);
    }
    await insertMessages(trx, messages);
    await insertDeliveries(trx, deliveries);
    await dequeueEvents(trx, taken);
    return { events: taken.length, launches, unlisted: deferListing ? deliveries.length : 0 };
  }

  /**
   * Fans out new events into the free `slots`, in a few rounds. The first reads about as many events
   * as there are free slots. If it took all it read and slots are left (some events had no subscribed
   * endpoint, or one at its limit), the next reads as many as the slots left would take at the same
   * ratio of events to slots, a whole batch when none took a slot: a backlog stays in the event queue
   * rather than becoming deliveries that wait, and every event read is taken. `more`: the rounds ran
   * out with slots and events left, so that one transaction stays short; another turn should follow.
   */
  async #fanOutIntoSlots(trx: Kysely<Database>, slots: Slots, now: number): Promise<{ events: number; launches: Launch[]; unlisted: number; more: boolean }> {
    const { dispatchBatch } = this.options;
    const out = { events: 0, launches: [] as Launch[], unlisted: 0, more: false };
    let limit = Math.min(dispatchBatch, Math.max(slots.free, REFILL_SLOTS));
    for (let round = 0; slots.free > 0; round++) {
      if (round === FAN_OUT_ROUNDS) {
        out.more = true;
        break;
      }
      const before = slots.free;
      const fanned = await this.#fanOutIn(trx, limit, now, slots);
      out.events += fanned.events;
      out.unlisted += fanned.unlisted;
      out.launches.push(...fanned.launches);
      if (fanned.events < limit) break;
      const used = before - slots.free;
      limit = used === 0 ? dispatchBatch : Math.min(dispatchBatch, Math.max(REFILL_SLOTS, Math.ceil((slots.free * fanned.events) / used)));
    }
    return out;
  }

  #count(step: StepFigures, units: number, started: number): void {
    step.units += units;
    step.seconds += (performance.now() - started) / 1000;
  }

  #body(event: EventRow): string {
    return storedEnvelopeBody(event);
  }

  // ----- Claiming ---------------------------------------------------------------------------------

  /** Leases due deliveries within `slots` (updating them) in `trx`, with their endpoints and bodies. */
  async #claimIn(trx: Kysely<Database>, slots: Slots, now: number): Promise<Launch[]> {
    const capacity = slots.free;
    if (capacity <= 0) return [];
    const { perEndpointConcurrency } = this.options;
    const { busy } = slots;
    // The earliest due deliveries first, without reading the whole backlog; the full query only when
    // an endpoint with free slots may have due deliveries beyond that scan (so none waits behind
    // another endpoint's backlog).
    const bounded = await dueCandidatesBounded(trx, now, perEndpointConcurrency, capacity * 2, Math.max(256, capacity * 16));
    let candidates = bounded.rows;
    if (bounded.truncated) {
      const seen = new Set(candidates.map((c) => c.endpoint_id));
      const others = [...bounded.enabled].some((id) => !seen.has(id) && (busy.get(id) ?? 0) < perEndpointConcurrency);
      if (others || candidates.length === 0) candidates = await dueCandidates(trx, now, perEndpointConcurrency, capacity * 2);
    }
    // Whatever this claim does not lease waits for the next one.
    this.#mayBeDue = bounded.truncated || candidates.length > 0;
    if (candidates.length === 0) return [];
    const chosen: string[] = [];
    const planned = new Map<string, number>();
    for (const candidate of candidates) {
      const n = (busy.get(candidate.endpoint_id) ?? 0) + (planned.get(candidate.endpoint_id) ?? 0);
      if (n >= perEndpointConcurrency) continue;
      planned.set(candidate.endpoint_id, (planned.get(candidate.endpoint_id) ?? 0) + 1);
      chosen.push(candidate.id);
      if (chosen.length >= capacity) break;
    }
    const leased = await leaseDeliveries(trx, this.dialect, chosen, now, this.options.leaseMs, this.options.owner);
    this.#mayBeDue = bounded.truncated || leased.length < candidates.length;
    if (leased.length === 0) return [];
    for (const delivery of leased) busy.set(delivery.endpoint_id, (busy.get(delivery.endpoint_id) ?? 0) + 1);
    slots.free -= leased.length;
    const endpoints = new Map((await findEndpoints(trx, [...new Set(leased.map((d) => d.endpoint_id))])).map((e) => [e.id, e]));
    const eventIds = [...new Set(leased.map((d) => d.event_id))];
    // The bodies, with the origin of their events (for the trace headers), in one read.
    const messages = await findMessagesWithOrigins(trx, eventIds);
    const missing = eventIds.filter((id) => !messages.has(id));
    if (missing.length > 0) {
      // A first attempt whose worker died before recording it: its body was never stored. It is
      // made again from the event, exactly as at fan-out, and stored for every attempt after this one.
      const events = await findEvents(trx, missing);
      const rebuilt = events.map((event) => ({ event_id: event.id, body: this.#body(event), created_at: now }));
      await insertMessages(trx, rebuilt);
      events.forEach((event, i) => messages.set(event.id, { body: rebuilt[i]?.body as string, origin: event.origin ?? null }));
    }
    return leased.map((delivery) => {
      const message = messages.get(delivery.event_id);
      return { delivery, endpoint: endpoints.get(delivery.endpoint_id), body: message?.body, stored: true, origin: message?.origin ?? null };
    });
  }

  #launch(launches: readonly Launch[]): Promise<void>[] {
    return launches.map(({ delivery, endpoint, body, stored, origin }) => this.#track(this.#attempt(delivery, endpoint, body, stored, origin)));
  }

  #track(work: Promise<void>): Promise<void> {
    const tracked = work
      .catch((error: unknown) => this.log.error({ err: error }, 'webhook attempt failed to complete'))
      .finally(() => {
        this.#inflight.delete(tracked);
        // The last attempt in flight has ended (an attempt that is recorded was counted by the turn
        // that recorded it): look for more now rather than at the next period.
        if (this.#running && this.#inflight.size === 0) this.#kick();
      });
    this.#inflight.add(tracked);
    return tracked;
  }

  // ----- Sending ----------------------------------------------------------------------------------

  async #attempt(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow | undefined, body: string | undefined, stored: boolean, origin: string | null): Promise<void> {
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
    // Signed anew for every attempt (a fresh `t`), over the body bytes stored at fan-out. Each attempt
    // is a span of its own in the trace of the request that caused the event (docs/webhooks.md).
    const trace = deliveryTrace(delivery.event_id, origin);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [this.#headers.signature]: signatureHeader(secrets, Math.floor(attemptedAt / 1000), body),
      [this.#headers.idempotency]: delivery.idempotency_key,
      'user-agent': this.#headers.userAgent,
      traceparent: trace.traceparent,
    };
    if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate;
    if (trace.requestId !== undefined) headers['x-request-id'] = trace.requestId;
    const result = await this.sender.send({ url: endpoint.url, headers, body });
    if (result.error === null) this.stats.attempts.succeeded++;
    else this.stats.attempts.failed++;
    const next = afterAttempt(delivery, result.error === null, this.options.random);
    // Its retry (at once after a first failure) is claimed by the turn that records this attempt, or later.
    if (next.status === 'pending') this.#mayBeDue = true;
    const now = this.clock.now().getTime();
    const recorded = await this.#record(
      delivery.attempts,
      { ...next, last_attempt_at: attemptedAt, updated_at: now },
      { delivery_id: delivery.id, seq: next.attempts, attempted_at: attemptedAt, status_code: result.statusCode, duration_ms: result.durationMs, error: result.error },
      // A retry, or a replay of the dead letter, sends these very bytes again.
      stored || next.status === 'succeeded' ? null : { event_id: delivery.event_id, body, created_at: now },
    );
    if (!recorded) this.log.warn({ delivery: delivery.id }, 'webhook lease lapsed before the attempt was recorded');
  }

  /**
   * Queues an attempt and the delivery's new state for the next turn's transaction; resolves once
   * committed (false: the lease had lapsed, nothing written). Attempts that complete while a commit
   * is under way are recorded together, so that a durable commit (an fsync on SQLite) is shared by
   * many attempts rather than paid by each.
   */
  #record(attemptsBefore: number, changes: PendingRecord['changes'], attempt: WebhookAttemptRow, message: WebhookMessageTable | null): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#records.push({ attemptsBefore, changes, attempt, message, resolve, reject });
      this.#startPump();
    });
  }

  #recordOne(trx: Kysely<Database>, r: PendingRecord): Promise<boolean> {
    return recordAttempt(trx, this.options.owner, r.attemptsBefore, r.changes, r.attempt, r.message);
  }

  async #recordIn(trx: Kysely<Database>, batch: readonly PendingRecord[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const r of batch) out.push(await this.#recordOne(trx, r));
    return out;
  }

  /** Each record of a batch whose transaction failed, alone, so that one bad record does not take the others with it. */
  async #recordAlone(batch: readonly PendingRecord[]): Promise<void> {
    for (const r of batch) {
      try {
        r.resolve(await transaction(this.db, (trx) => this.#recordOne(trx, r)));
      } catch (error) {
        r.reject(error);
      }
    }
  }

  /** The loop of combined transactions (#drain), and the listing of deliveries once idle. */
  async #pump(): Promise<void> {
    try {
      // Once nothing is left to record or claim, the deliveries still unlisted; then look again.
      do await this.#drain();
      while (await this.#listWhenIdle());
    } finally {
      this.#pumping = false;
    }
    this.#pollSoon();
  }

  /**
   * The combined transactions: while attempts wait to be recorded or a claim is wanted, one
   * transaction per turn of the event loop records the attempts and, if the worker runs and enough
   * slots are free, leases due deliveries and fans out new events into the rest, and lists a batch of
   * deliveries when a batch waits. The attempts it leased start once it has committed.
   */
  async #drain(): Promise<void> {
    const { maxInFlight } = this.options;
    while (this.#records.length > 0 || (this.#claimWanted && this.#running)) {
      // One turn of the event loop, so that the attempts completing in it join this transaction.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = this.#records.splice(0, RECORD_BATCH);
      // The batch's attempts leave their slots when this transaction commits.
      const free = maxInFlight - this.#inflight.size + batch.length;
      const wanted = this.#claimWanted;
      this.#claimWanted = false;
      const claim = this.#running && free > 0 && (wanted || free >= Math.min(REFILL_SLOTS, maxInFlight));
      const scanDue = claim && (wanted || this.#mayBeDue);
      const now = this.clock.now().getTime();
      // Nothing to record: open a write transaction only if a read says there is work.
      if (batch.length === 0 && !(claim && ((scanDue && (await hasDueDeliveries(this.db, now))) || (await hasPendingEvents(this.db))))) continue;
      let result: { recorded: boolean[]; launches: Launch[]; dispatched: number; unlisted: number; more: boolean };
      let begun = 0;
      let ended = 0;
      const started = performance.now();
      try {
        result = await transaction(this.db, async (trx) => {
          begun = performance.now();
          if (this.#batchListing) this.#unlisted ??= await countUnlisted(trx);
          const recorded = await this.#recordIn(trx, batch);
          const claimed = performance.now();
          this.#count(this.stats.record, batch.length, begun);
          let launches: Launch[] = [];
          let fanned = { events: 0, launches: [] as Launch[], unlisted: 0, more: false };
          if (claim) {
            const slots: Slots = { free, busy: await leasedPerEndpoint(trx, now) };
            if (scanDue) launches = await this.#claimIn(trx, slots, now);
            this.#count(this.stats.claim, launches.length, claimed);
            const fanning = performance.now();
            fanned = await this.#fanOutIntoSlots(trx, slots, now);
            this.#count(this.stats.fanOut, fanned.events, fanning);
          }
          let unlisted = (this.#unlisted ?? 0) + fanned.unlisted;
          if (unlisted >= this.options.listBatch) unlisted = await this.#listIn(trx, unlisted);
          ended = performance.now();
          return { recorded, launches: launches.concat(fanned.launches), dispatched: fanned.events, unlisted, more: fanned.more };
        });
      } catch (error) {
        this.log.error({ err: error }, 'webhook delivery transaction failed');
        this.#mayBeDue = true;
        await this.#recordAlone(batch);
        continue;
      }
      // Begin and commit: the transaction's time outside the steps.
      this.stats.commit.units++;
      this.stats.commit.seconds += (begun - started + performance.now() - ended) / 1000;
      if (this.#batchListing) this.#unlisted = result.unlisted;
      batch.forEach((r, i) => r.resolve(result.recorded[i] === true));
      if (result.launches.length > 0 || result.dispatched > 0) this.#lastWork = performance.now();
      this.#launch(result.launches);
      if (result.more) this.#claimWanted = true;
    }
  }

  /**
   * Adds a batch of unlisted deliveries to their clients' listing index in `trx`; returns how many
   * remain unlisted, of `unlisted` (none when the batch was not full: nothing else waits).
   */
  async #listIn(trx: Kysely<Database>, unlisted: number): Promise<number> {
    const started = performance.now();
    const { listBatch } = this.options;
    const listed = await markListed(trx, listBatch);
    this.#count(this.stats.list, listed, started);
    return listed < listBatch ? 0 : Math.max(0, unlisted - listed);
  }

  /**
   * With no attempt in flight and nothing to record, lists the deliveries still waiting, a batch per
   * transaction; false when there was nothing to do. Waiting deliveries are counted first if this
   * worker has not counted them yet (those a previous run left).
   */
  async #listWhenIdle(): Promise<boolean> {
    if (!this.#batchListing || this.#inflight.size > 0 || this.#records.length > 0 || this.#unlisted === 0) return false;
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      this.#unlisted = await transaction(this.db, async (trx) => this.#listIn(trx, this.#unlisted ?? (await countUnlisted(trx))));
    } catch (error) {
      this.log.error({ err: error }, 'webhook delivery listing failed');
      return false;
    }
    return true;
  }

  /** Leases due deliveries within this process's free slots, in a transaction of its own, and starts their attempts. */
  async #claimAndLaunch(): Promise<Promise<void>[]> {
    const free = this.options.maxInFlight - this.#inflight.size;
    if (free <= 0) return [];
    const started = performance.now();
    const now = this.clock.now().getTime();
    const launches = await transaction(this.db, async (trx) => this.#claimIn(trx, { free, busy: await leasedPerEndpoint(trx, now) }, now));
    this.#count(this.stats.claim, launches.length, started);
    return this.#launch(launches);
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

  /**
   * After a loop with nothing left to start: while events have been coming in, look again shortly,
   * not a whole poll period later, so that an event recorded just after a turn does not wait for the
   * period (attempts in flight keep the loop going themselves when they end).
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
    this.#claimWanted = true;
    this.#startPump();
  }

  #startPump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    this.#pumped = this.#pump().catch((error: unknown) => this.log.error({ err: error }, 'webhook delivery loop failed'));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#timer = setInterval(() => this.#kick(), this.options.pollIntervalMs);
    this.#timer.unref();
    this.#kick();
  }

  /** Stops the loop, waits for attempts in flight (each bounded by the timeout) and their records, and closes the sender. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#running = false;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#soon !== null) clearTimeout(this.#soon);
    this.#soon = null;
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
    await this.#pumped;
    await this.sender.close();
  }
}

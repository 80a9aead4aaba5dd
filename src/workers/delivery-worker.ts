import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { transaction } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import { attemptDelivery, deliveryHeaderNames, type AttemptDeps } from '../webhooks/attempt.js';
import { claimIn } from '../webhooks/claim.js';
import type { FanOutLimits, Launch, Slots } from '../webhooks/core/fan-out.js';
import { countUnlisted, markListed } from '../webhooks/delivery-listing.repository.js';
import { hasDueDeliveries, hasPendingEvents, leasedPerEndpoint, settleWithoutAttempt } from '../webhooks/delivery.repository.js';
import { fanOutIn, fanOutIntoSlots, REFILL_SLOTS } from '../webhooks/fan-out.js';
import type { DeliveryWorkerOptions, Webhooks } from '../webhooks/index.js';
import { RecordQueue, recordAlone, recordIn } from '../webhooks/record.js';
import type { EndpointSecrets } from '../webhooks/secrets.js';
import type { WebhookSender } from '../webhooks/sender.js';
import { countStep, emptyDeliveryStats, type DeliveryWorkerStats } from './delivery-metrics.js';

export type { DeliveryWorkerStats, StepFigures } from './delivery-metrics.js';

/** While deliveries keep coming, look for new events this often rather than every poll period. */
const BUSY_POLL_MS = 20;
/** How long after the last work the worker keeps looking every BUSY_POLL_MS. */
const BUSY_WINDOW_MS = 2_000;

export interface RunReport {
  /** Events fanned out. */
  dispatched: number;
  /** Attempts made. */
  attempted: number;
}

/**
 * The delivery loop. Each stored event becomes one delivery per subscribed endpoint (its fan-out,
 * webhooks/fan-out.ts, with the body serialised once and the event taken off the fan-out queue); due
 * deliveries are leased (webhooks/claim.ts), sent without holding any transaction
 * (webhooks/attempt.ts), and each attempt is recorded with the delivery's next state
 * (webhooks/record.ts).
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
  readonly stats: DeliveryWorkerStats = emptyDeliveryStats();
  readonly #inflight = new Set<Promise<void>>();
  readonly #records = new RecordQueue();
  readonly #attempt: AttemptDeps;
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
    secrets: EndpointSecrets,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.#batchListing = dialectOf(dialect).singleWriter;
    this.#attempt = { secrets, sender, clock, names: deliveryHeaderNames(options.serviceName) };
  }

  /**
   * Loads what the sender sends with, so that the first attempt does not pay for it inside its
   * time-out. `start` calls it; a process that builds the worker but never starts it loads nothing.
   */
  prepare(): Promise<void> {
    return this.sender.prepare().catch((error: unknown) => this.log.error({ err: error }, 'the webhook sender could not be prepared'));
  }

  #limits(deferListing: boolean): FanOutLimits {
    const { perEndpointConcurrency, leaseMs, owner } = this.options;
    return { perEndpointConcurrency, leaseMs, owner, deferListing };
  }

  /** Fans out one batch of pending events in a transaction of its own; returns how many events it took (0: none left). */
  async fanOut(): Promise<number> {
    // Most turns find nothing to fan out: a read says so without opening a write transaction.
    if (!(await hasPendingEvents(this.db))) return 0;
    const started = performance.now();
    const { events } = await transaction(this.db, (trx) =>
      fanOutIn(trx, this.dialect, this.options.dispatchBatch, this.clock.now().getTime(), null, this.#limits(false)),
    );
    countStep(this.stats.fanOut, events, started);
    return events;
  }

  /** Leases due deliveries within `slots` in `trx`, noting whether more may be due. */
  async #claimIn(trx: Kysely<Database>, slots: Slots, now: number): Promise<Launch[]> {
    const { launches, mayBeDue } = await claimIn(trx, this.dialect, slots, now, this.options);
    if (mayBeDue !== null) this.#mayBeDue = mayBeDue;
    return launches;
  }

  #launch(launches: readonly Launch[]): Promise<void>[] {
    return launches.map((launch) => this.#track(this.#send(launch)));
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

  /** Sends one leased delivery and records the outcome: at once when no attempt was made, else with the next turn. */
  async #send(launch: Launch): Promise<void> {
    const outcome = await attemptDelivery(launch, this.#attempt);
    const { delivery } = launch;
    if (outcome.kind === 'settled') {
      if (outcome.bodyMissing) this.log.error({ delivery: delivery.id, event: delivery.event_id }, 'webhook body missing');
      await settleWithoutAttempt(this.db, delivery.id, this.options.owner, outcome.changes);
      return;
    }
    if (outcome.succeeded) this.stats.attempts.succeeded++;
    else this.stats.attempts.failed++;
    // Its retry (at once after a first failure) is claimed by the turn that records this attempt, or later.
    if (outcome.record.changes.status === 'pending') this.#mayBeDue = true;
    const recorded = this.#records.add(outcome.record);
    this.#startPump();
    if (!(await recorded)) this.log.warn({ delivery: delivery.id }, 'webhook lease lapsed before the attempt was recorded');
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
    const { maxInFlight, owner } = this.options;
    while (this.#records.size > 0 || (this.#claimWanted && this.#running)) {
      // One turn of the event loop, so that the attempts completing in it join this transaction.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = this.#records.take();
      // The batch's attempts leave their slots when this transaction commits.
      const free = maxInFlight - this.#inflight.size + batch.length;
      const wanted = this.#claimWanted;
      this.#claimWanted = false;
      const claim = this.#running && free > 0 && (wanted || free >= Math.min(REFILL_SLOTS, maxInFlight));
      const scanDue = claim && (wanted || this.#mayBeDue);
      const now = this.clock.now().getTime();
      // Nothing to record: open a write transaction only if a read says there is work.
      if (batch.length === 0 && !(claim && ((scanDue && (await hasDueDeliveries(this.db, now))) || (await hasPendingEvents(this.db)))))
        continue;
      let result: { recorded: boolean[]; launches: Launch[]; dispatched: number; unlisted: number; more: boolean };
      let begun = 0;
      let ended = 0;
      const started = performance.now();
      try {
        result = await transaction(this.db, async (trx) => {
          begun = performance.now();
          if (this.#batchListing) this.#unlisted ??= await countUnlisted(trx);
          const recorded = await recordIn(trx, owner, batch);
          const claimed = performance.now();
          countStep(this.stats.record, batch.length, begun);
          let launches: Launch[] = [];
          let fanned = { events: 0, launches: [] as Launch[], unlisted: 0, leftDue: false, more: false };
          if (claim) {
            const slots: Slots = { free, busy: await leasedPerEndpoint(trx, now) };
            if (scanDue) launches = await this.#claimIn(trx, slots, now);
            countStep(this.stats.claim, launches.length, claimed);
            const fanning = performance.now();
            // Only the running worker lists its deliveries later, in these combined transactions.
            fanned = await fanOutIntoSlots(trx, this.dialect, slots, now, this.options.dispatchBatch, this.#limits(this.#batchListing));
            if (fanned.leftDue) this.#mayBeDue = true;
            countStep(this.stats.fanOut, fanned.events, fanning);
          }
          let unlisted = (this.#unlisted ?? 0) + fanned.unlisted;
          if (unlisted >= this.options.listBatch) unlisted = await this.#listIn(trx, unlisted);
          ended = performance.now();
          return { recorded, launches: launches.concat(fanned.launches), dispatched: fanned.events, unlisted, more: fanned.more };
        });
      } catch (error) {
        this.log.error({ err: error }, 'webhook delivery transaction failed');
        this.#mayBeDue = true;
        await recordAlone(this.db, owner, batch);
        continue;
      }
      // Begin and commit: the transaction's time outside the steps.
      this.stats.commit.units++;
      this.stats.commit.seconds += (begun - started + performance.now() - ended) / 1000;
      if (this.#batchListing) this.#unlisted = result.unlisted;
      batch.forEach((r, i) => {
        r.resolve(result.recorded[i] === true);
      });
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
    countStep(this.stats.list, listed, started);
    return listed < listBatch ? 0 : Math.max(0, unlisted - listed);
  }

  /**
   * With no attempt in flight and nothing to record, lists the deliveries still waiting, a batch per
   * transaction; false when there was nothing to do. Waiting deliveries are counted first if this
   * worker has not counted them yet (those a previous run left).
   */
  async #listWhenIdle(): Promise<boolean> {
    if (!this.#batchListing || this.#inflight.size > 0 || this.#records.size > 0 || this.#unlisted === 0) return false;
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
    countStep(this.stats.claim, launches.length, started);
    return this.#launch(launches);
  }

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
    void this.prepare();
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

/** The delivery worker of a wired webhooks module, with `overrides` of its options (tests run several). */
export function createDeliveryWorker(webhooks: Pick<Webhooks, 'delivery'>, overrides: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
  const { db, dialect, secrets, sender, clock, options, log } = webhooks.delivery;
  return new DeliveryWorker(db, dialect, secrets, sender, clock, { ...options, ...overrides }, log);
}

/**
 * The service side of `npm run bench:webhooks`, one child process per step, so that each step's CPU
 * (and CPU profile) is its own. A runtime of the service as `cauri serve` builds it (sandbox, SQLite
 * with synchronous=FULL, LOG_LEVEL=warn, CAURI_WORKERS=none) plus the webhook delivery worker with
 * its default options, started here. Prints one JSON line on stdout at the end.
 *
 *   node webhook-service.js prepare   clients, one endpoint each at the receiver, N stored events
 *   node webhook-service.js deliver   starts the worker on that backlog; time until all N are delivered
 *   node webhook-service.js latency   fresh database: worker running, events recorded at a steady rate
 *
 * Settings come from the environment the harness (bench/webhooks.ts) sets: BENCH_DATA_DIR,
 * BENCH_MASTER_KEY, BENCH_RECEIVER, BENCH_ENDPOINTS, BENCH_EVENTS, BENCH_RATE, BENCH_SECONDS,
 * BENCH_WARMUP_SECONDS.
 */
import { sql } from 'kysely';
import { createRuntime, type Runtime } from '../src/app.js';
import { parseConfig } from '../src/config/config.js';
import { resolveMasterKey } from '../src/config/master-key.js';
import { recordEvent } from '../src/events/event.service.js';
import { CursorCodec } from '../src/http/cursor.js';
import type { ClientId } from '../src/lib/ids.js';
import { sampleEventData } from '../src/webhooks/core/payload.js';
import type { DeliveryWorkerStats } from '../src/workers/delivery-metrics.js';
import { createDeliveryWorker } from '../src/workers/delivery-worker.js';
import { hasPendingDeliveries, hasPendingEvents } from '../src/webhooks/delivery.repository.js';
import { createWebhooks, defaultWebhookOptions, type WebhookOptions } from '../src/webhooks/index.js';

export interface BenchEndpoint {
  id: string;
  clientId: string;
  url: string;
  secret: string;
}

export interface PrepareResult {
  endpoints: BenchEndpoint[];
  events: number;
  recordMs: number;
}

/** The worker options that bound concurrency, as the worker ran with them. */
export interface WorkerSettings {
  perEndpointConcurrency: number;
  maxInFlight: number;
  pollIntervalMs: number;
  dispatchBatch: number;
  listBatch: number;
  timeoutMs: number;
}

export interface DeliverResult {
  events: number;
  succeeded: number;
  attempts: number;
  failedAttempts: number;
  elapsedMs: number;
  perSecond: number;
  /** CPU time of the service process (every thread, user and system) per delivery, in µs. */
  cpuUsPerDelivery: number;
  /** The worker's own figures: what each database step handled and its time. */
  steps: DeliveryWorkerStats;
  worker: WorkerSettings;
}

export interface LatencyResult {
  rate: number;
  seconds: number;
  warmupSeconds: number;
  /** Events recorded in the measured window (after the warm-up), and the rate actually reached. */
  recorded: number;
  achievedRate: number;
  /** Events recorded in the whole run, warm-up included, and how many were delivered. */
  recordedTotal: number;
  succeeded: number;
  attempts: number;
  /** Epoch ms from which events count (the end of the warm-up). */
  since: number;
  /** Event created_at to the attempt's attempted_at as the worker recorded it (the send starts then). */
  dbLatency: { p50: number; p99: number; max: number } | null;
  drainMs: number;
  worker: WorkerSettings;
}

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const progress = (message: string) => process.stderr.write(`[bench:webhooks:service] ${message}\n`);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

async function openRuntime(): Promise<Runtime> {
  const config = parseConfig({
    CAURI_MODE: 'sandbox',
    CAURI_DATA_DIR: env('BENCH_DATA_DIR'),
    CAURI_MASTER_KEY: env('BENCH_MASTER_KEY'),
    CAURI_SQLITE_SYNCHRONOUS: 'FULL',
    CAURI_WORKERS: 'none',
    LOG_LEVEL: 'warn',
  });
  return createRuntime(config);
}

function webhooksOf(runtime: Runtime) {
  const webhooks = createWebhooks({
    config: runtime.config,
    storage: runtime.storage,
    clock: runtime.clock,
    masterKey: resolveMasterKey(runtime.config),
    idempotency: runtime.services.idempotency,
    cursors: new CursorCodec(Buffer.alloc(32)),
    log: runtime.app.log,
  });
  return { ...webhooks, worker: createDeliveryWorker(webhooks) };
}

function workerSettings(): WorkerSettings {
  const o: WebhookOptions = defaultWebhookOptions();
  return {
    perEndpointConcurrency: o.perEndpointConcurrency,
    maxInFlight: o.maxInFlight,
    pollIntervalMs: o.pollIntervalMs,
    dispatchBatch: o.dispatchBatch,
    listBatch: o.listBatch,
    timeoutMs: o.timeoutMs,
  };
}

/** One client per endpoint (a client may have 16), each endpoint at its own path of the receiver. */
async function createEndpoints(runtime: Runtime, count: number): Promise<BenchEndpoint[]> {
  const { endpoints } = webhooksOf(runtime).service;
  const receiver = env('BENCH_RECEIVER');
  const out: BenchEndpoint[] = [];
  for (let i = 0; i < count; i++) {
    const client = await runtime.services.clients.create(`bench-webhooks-${i}`);
    const url = `${receiver}/hooks/${i}`;
    const created = await runtime.storage.transact((trx) => endpoints.create(trx, client.client_id, { url, events: ['order.created'] }));
    out.push({ id: created.id, clientId: client.client_id, url, secret: created.secret });
  }
  return out;
}

/** Records `count` order.created events, round-robin over the endpoints' clients, in one durable transaction. */
async function recordEvents(runtime: Runtime, clients: readonly string[], count: number, offset: number): Promise<void> {
  await runtime.storage.transact(async (trx) => {
    for (let i = 0; i < count; i++) {
      const at = new Date();
      const data = sampleEventData('order.created', { at, endpointId: '' });
      await recordEvent(trx, {
        clientId: clients[(offset + i) % clients.length] as ClientId,
        type: 'order.created',
        data,
        livemode: false,
        at,
      });
    }
  });
}

async function countDeliveries(runtime: Runtime): Promise<{ succeeded: number; attempts: number; failedAttempts: number }> {
  const { db } = runtime.storage;
  const succeeded = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  const attempts = await db
    .selectFrom('webhook_attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const failed = await db
    .selectFrom('webhook_attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('error', 'is not', null)
    .executeTakeFirstOrThrow();
  return { succeeded: Number(succeeded.n), attempts: Number(attempts.n), failedAttempts: Number(failed.n) };
}

/**
 * Waits until nothing is left to deliver (no event awaiting fan-out, no pending delivery), then
 * checks that `target` deliveries succeeded. The check every 20 ms is three index probes (the event
 * queue, and the queue's two partial indexes of deliveries) that stop at the first row: counting the
 * succeeded deliveries instead scanned an index over the whole backlog, on the worker's own thread,
 * 50 times a second, and the measure charged it to the worker.
 */
async function waitDelivered(runtime: Runtime, target: number, timeoutMs: number): Promise<void> {
  const { db } = runtime.storage;
  const deadline = performance.now() + timeoutMs;
  let lastLog = performance.now();
  for (;;) {
    if (!(await hasPendingEvents(db)) && !(await hasPendingDeliveries(db))) {
      const { succeeded } = await countDeliveries(runtime);
      if (succeeded >= target) return;
      throw new Error(`nothing left to deliver, but only ${succeeded} of ${target} deliveries succeeded`);
    }
    if (performance.now() > deadline) throw new Error(`deliveries still pending after ${timeoutMs} ms`);
    if (performance.now() - lastLog > 5_000) {
      progress(`${(await countDeliveries(runtime)).succeeded} of ${target} delivered`);
      lastLog = performance.now();
    }
    await pause(20);
  }
}

async function prepare(): Promise<PrepareResult> {
  const runtime = await openRuntime();
  try {
    const endpoints = await createEndpoints(runtime, Number(env('BENCH_ENDPOINTS')));
    const total = Number(env('BENCH_EVENTS'));
    const clients = endpoints.map((e) => e.clientId);
    const started = performance.now();
    for (let done = 0; done < total; done += 500) await recordEvents(runtime, clients, Math.min(500, total - done), done);
    return { endpoints, events: total, recordMs: performance.now() - started };
  } finally {
    await runtime.close();
  }
}

async function deliver(): Promise<DeliverResult> {
  const runtime = await openRuntime();
  try {
    const events = Number(env('BENCH_EVENTS'));
    const { worker } = webhooksOf(runtime);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    let elapsedMs = 0;
    let cpuUs = 0;
    worker.start();
    try {
      await waitDelivered(runtime, events, 150_000);
      elapsedMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      cpuUs = cpu.user + cpu.system;
    } finally {
      await worker.stop();
    }
    const counts = await countDeliveries(runtime);
    return {
      events,
      ...counts,
      elapsedMs,
      perSecond: (events / elapsedMs) * 1000,
      cpuUsPerDelivery: cpuUs / events,
      steps: worker.stats,
      worker: workerSettings(),
    };
  } finally {
    await runtime.close();
  }
}

async function latency(): Promise<LatencyResult> {
  const runtime = await openRuntime();
  try {
    const endpoints = await createEndpoints(runtime, Number(env('BENCH_ENDPOINTS')));
    const clients = endpoints.map((e) => e.clientId);
    const rate = Number(env('BENCH_RATE'));
    const seconds = Number(env('BENCH_SECONDS'));
    const warmupSeconds = Number(env('BENCH_WARMUP_SECONDS'));
    const since = Date.now() + warmupSeconds * 1000;
    // The receiver counts only envelopes created from the end of the warm-up on.
    const reset = await fetch(`${env('BENCH_RECEIVER')}/reset?since=${since}`, { method: 'POST' });
    if (reset.status !== 204) throw new Error(`receiver reset answered ${reset.status}`);

    const { worker } = webhooksOf(runtime);
    worker.start();
    const totalMs = (warmupSeconds + seconds) * 1000;
    const started = performance.now();
    let recorded = 0;
    let recordedBeforeWindow = 0;
    let windowStart = 0;
    let windowEnd = 0;
    let drainMs = 0;
    try {
      // One event per millisecond on average: each turn records the events due by now, in one small
      // durable transaction (SQLite group commit), as the request paths record theirs.
      for (;;) {
        const elapsed = performance.now() - started;
        if (elapsed >= totalMs) break;
        if (windowStart === 0 && Date.now() >= since) {
          windowStart = performance.now();
          recordedBeforeWindow = recorded;
        }
        const due = Math.floor((elapsed * rate) / 1000) - recorded;
        if (due > 0) {
          await recordEvents(runtime, clients, due, recorded);
          recorded += due;
        } else {
          await pause(1);
        }
      }
      windowEnd = performance.now();
      const drainStarted = performance.now();
      await waitDelivered(runtime, recorded, 60_000);
      drainMs = performance.now() - drainStarted;
    } finally {
      await worker.stop();
    }
    const counts = await countDeliveries(runtime);
    const rows = await sql<{ created_at: number; attempted_at: number }>`
      select e.created_at, a.attempted_at
      from webhook_attempts a
      join webhook_deliveries d on d.id = a.delivery_id
      join events e on e.id = d.event_id
      where a.seq = 1 and e.created_at >= ${since}`.execute(runtime.storage.db);
    const lat = rows.rows.map((r) => Number(r.attempted_at) - Number(r.created_at)).sort((a, b) => a - b);
    const inWindow = recorded - recordedBeforeWindow;
    return {
      rate,
      seconds,
      warmupSeconds,
      recorded: inWindow,
      achievedRate: (inWindow / (windowEnd - windowStart)) * 1000,
      recordedTotal: recorded,
      succeeded: counts.succeeded,
      attempts: counts.attempts,
      since,
      dbLatency: lat.length === 0 ? null : { p50: percentile(lat, 50), p99: percentile(lat, 99), max: lat[lat.length - 1] ?? 0 },
      drainMs,
      worker: workerSettings(),
    };
  } finally {
    await runtime.close();
  }
}

const steps: Record<string, () => Promise<unknown>> = { prepare, deliver, latency };
const step = steps[process.argv[2] ?? ''];
if (step === undefined) {
  process.stderr.write(`usage: webhook-service.js ${Object.keys(steps).join('|')}\n`);
  process.exit(2);
}
try {
  const result = await step();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`[bench:webhooks:service] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}

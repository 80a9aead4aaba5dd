// The Markdown report of the webhook benchmark (docs/benchmarks-webhooks.md), from its figures.
import { fileURLToPath } from 'node:url';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import type { StepFigures } from '../src/workers/delivery-metrics.js';
import { packageVersion } from './report.js';
import type { BareResult } from './webhook-bare-sender.js';
import type { ReceiverStats } from './webhook-receiver.js';
import type { DeliverResult, LatencyResult, PrepareResult } from './webhook-service.js';

/** The repository's root (compiled, this module sits in dist/bench/). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The goals the report checks: at least this share of the bare sender's rate, and this p99 latency. */
export const THROUGHPUT_GOAL = 0.4;
export const P99_GOAL_MS = 200;

export interface Figures {
  started: Date;
  finished: Date;
  events: number;
  endpoints: number;
  concurrency: number;
  prepare: PrepareResult;
  /** Every round of ours, and their sum (perSecond and CPU over all of them). */
  rounds: DeliverResult[];
  ours: DeliverResult;
  /** What the receiver saw from ours, over every round. */
  oursReceived: { requests: number; distinctKeys: number };
  bare: BareResult[];
  /** The bare sender on undici's dispatch(), the API the worker's sender uses. */
  bareDispatch: BareResult[];
  /** The bare sender with a durable record of each post: the floor of durable delivery. */
  floor: BareResult[];
  latency: LatencyResult;
  latencyReceived: ReceiverStats;
}

export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
export const pct = (r: number) => `${(r * 100).toFixed(0)} %`;
export const meanRate = (runs: readonly BareResult[]) => runs.reduce((a, b) => a + b.perSecond, 0) / runs.length;

/** The rows of one reference in the throughput table: each of its runs (before round i, then after the last), and their mean. */
export function referenceRows(label: string, runs: readonly BareResult[], ours: number): string[] {
  return [
    ...runs.map(
      (b, i) =>
        `| ${label}, ${i < runs.length - 1 ? `before round ${i + 1}` : 'after the last round'} | ${b.concurrency} | ${int(b.posts)} | ${secs(b.elapsedMs)} | ${int(b.perSecond)} | ${int(b.cpuUsPerPost)} µs | ${pct(ours / b.perSecond)} |`,
    ),
    `| ${label}, mean | | | | ${int(meanRate(runs))} | | **${pct(ours / meanRate(runs))}** |`,
  ];
}

/** The rounds of ours as one run: counts, time and the worker's figures added, rate and CPU over the whole. */
export function together(rounds: readonly DeliverResult[]): DeliverResult {
  const first = rounds[0];
  if (first === undefined) throw new Error('no rounds');
  const sum = (pick: (r: DeliverResult) => number) => rounds.reduce((a, r) => a + pick(r), 0);
  const step = (key: 'fanOut' | 'claim' | 'record' | 'list' | 'commit') => ({
    units: sum((r) => r.steps[key].units),
    seconds: sum((r) => r.steps[key].seconds),
  });
  const events = sum((r) => r.events);
  const elapsedMs = sum((r) => r.elapsedMs);
  return {
    events,
    succeeded: sum((r) => r.succeeded),
    attempts: sum((r) => r.attempts),
    failedAttempts: sum((r) => r.failedAttempts),
    elapsedMs,
    perSecond: (events / elapsedMs) * 1000,
    cpuUsPerDelivery: sum((r) => r.cpuUsPerDelivery * r.events) / events,
    steps: {
      fanOut: step('fanOut'),
      claim: step('claim'),
      record: step('record'),
      list: step('list'),
      commit: step('commit'),
      attempts: { succeeded: sum((r) => r.steps.attempts.succeeded), failed: sum((r) => r.steps.attempts.failed) },
    },
    worker: first.worker,
  };
}

/** The rows of the step table: each database step of the worker, then the rest of the run. */
export function steps(f: Figures): string[] {
  const st = f.ours.steps;
  const n = f.ours.succeeded;
  const runSeconds = f.ours.elapsedMs / 1000;
  const rows: [string, string, StepFigures][] = [
    ['Fan-out', 'events', st.fanOut],
    ['Claim of due deliveries (scan, lease, reads)', 'deliveries', st.claim],
    ['Record (attempt and new state)', 'attempts', st.record],
    ["Listing (deliveries added to their client's index, in batches)", 'deliveries', st.list],
    ['Begin and commit (combined transactions)', 'transactions', st.commit],
  ];
  const us = (seconds: number, per: number) => (per === 0 ? '—' : `${int((seconds * 1e6) / per)} µs`);
  const inSteps = rows.reduce((a, [, , s]) => a + s.seconds, 0);
  return [
    ...rows.map(
      ([name, unit, s]) =>
        `| ${name} | ${int(s.units)} ${unit} | ${secs(s.seconds * 1000)} | ${us(s.seconds, s.units)} | ${us(s.seconds, n)} | ${pct(s.seconds / runSeconds)} |`,
    ),
    `| Everything else (signing, HTTP, timers, GC) | | ${secs((runSeconds - inSteps) * 1000)} | | ${us(runSeconds - inSteps, n)} | ${pct((runSeconds - inSteps) / runSeconds)} |`,
  ];
}

export function render(f: Figures): string {
  const cpuList = cpus();
  const w = f.ours.worker;
  const bareMean = meanRate(f.bare);
  const ratio = f.ours.perSecond / bareMean;
  const floorMean = meanRate(f.floor);
  const dispatchMean = meanRate(f.bareDispatch);
  const lat = f.latencyReceived.latency;
  const p99 = lat?.p99 ?? Number.POSITIVE_INFINITY;
  const throughputMet = ratio >= THROUGHPUT_GOAL;
  const latencyMet = p99 < P99_GOAL_MS;
  const versions = ['undici', 'better-sqlite3', 'kysely'].map((p) => `${p} ${packageVersion(ROOT, p)}`).join(', ');
  const l = f.latency;
  const lines = [
    '# Benchmark: webhook delivery',
    '',
    '<!-- Generated by `npm run bench:webhooks` (bench/webhooks.ts). Do not edit by hand: the next run overwrites this file. -->',
    '',
    `- **Date**: ${f.started.toISOString().replace(/\.\d+Z$/, 'Z')} (run took ${Math.round((f.finished.getTime() - f.started.getTime()) / 1000)} s)`,
    `- **Machine**: ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${platform()} ${release()} ${arch()} (shared, noisy)`,
    `- **Node.js**: ${process.version}; ${versions}`,
    `- **Settings**: sandbox, SQLite \`synchronous=FULL\` (every attempt is committed durably before the next state is acted on), \`LOG_LEVEL=warn\`, ` +
      `${f.endpoints} clients with one endpoint each, all at one local receiver; delivery worker with its default options: ` +
      `${w.perEndpointConcurrency} attempts in flight per endpoint, ${w.maxInFlight} per process, poll every ${w.pollIntervalMs} ms, fan-out batches of ${w.dispatchBatch}, deliveries added to their client's listing index ${w.listBatch} at a time, ` +
      `attempt timeout ${w.timeoutMs / 1000} s. Effective concurrency min(${f.endpoints} × ${w.perEndpointConcurrency}, ${w.maxInFlight}) = **${f.concurrency}**.`,
    '',
    '## Summary',
    '',
    '| Measure | Ours | Reference | Ratio | Goal | Met |',
    '|---|---:|---:|---:|---|---|',
    `| Deliveries per second, ${int(f.events / f.rounds.length)} events (backlog) × ${f.rounds.length} rounds | ${int(f.ours.perSecond)} | ${int(bareMean)} (bare undici) | ${pct(ratio)} | ≥ ${pct(THROUGHPUT_GOAL)} of bare undici | ${throughputMet ? 'yes' : '**no**'} |`,
    `| Event to first attempt at ${int(l.rate)} events/s, p50 / p99 | ${lat === null ? '—' : `${lat.p50} ms / ${lat.p99} ms`} | — | — | p99 < ${P99_GOAL_MS} ms | ${latencyMet ? 'yes' : '**no**'} |`,
    `| Bare undici on \`dispatch()\` (the API of the worker's sender), same run | ${int(f.ours.perSecond)} | ${int(dispatchMean)} | ${pct(f.ours.perSecond / dispatchMean)} | (it is ${pct(dispatchMean / bareMean)} of bare undici) | |`,
    `| Durable floor (bare undici + one durable insert per post), same run | ${int(f.ours.perSecond)} | ${int(floorMean)} | ${pct(f.ours.perSecond / floorMean)} | (the floor is ${pct(floorMean / bareMean)} of bare undici) | |`,
    '',
    `Goals met: ${(throughputMet ? 1 : 0) + (latencyMet ? 1 : 0)} of 2.`,
    '',
    '## Throughput',
    '',
    `In each of ${f.rounds.length} rounds, ${int(f.events / f.rounds.length)} \`order.created\` events (the realistic sample order as \`data\`) were stored first, ` +
      `round-robin over the ${f.endpoints} clients (${secs(f.prepare.recordMs)} to record them in the first round, not counted), on a fresh database. ` +
      'Ours is the time from starting the delivery worker to the moment every delivery is recorded as succeeded: fan-out (serialising ' +
      'each body once, one delivery row per event, inserted already leased when a slot is free), signing, the POST, and recording each ' +
      "attempt with the delivery's new state, in one durable transaction per turn of the event loop with the next fan-out. " +
      'The bare sender posts the same bodies (serialised before its clock starts) with the same headers, signed anew for each post, ' +
      `with ${f.concurrency} requests in flight over one undici Agent (keep-alive), through \`request()\`, and records nothing: the goal's reference. Each round ran the bare sender, the same on \`dispatch()\`, the durable floor, then ours; the three references ran once more after the last ` +
      'round, so that every run of ours has reference runs on either side (a slow spell of the shared machine then weighs on both sides). ' +
      'Ours is the rate over all its rounds; each reference, the mean of its runs.',
    '',
    "The worker's sender posts through undici's low-level `dispatch()` with a handler that keeps the status and discards at most 64 KiB of " +
      'body, rather than `request()`, which makes a promise and a readable stream for every response body. The second reference is the bare ' +
      'sender doing the same, so that the part of the ratio that comes from that choice, rather than from the delivery model, can be read off.',
    '',
    'The durable floor is the bare sender that also inserts one row per post (idempotency key, status, duration, time) into a table with ' +
      'its primary key and nothing else (WAL, `synchronous=FULL`), the posts completed in one event-loop turn committed together, each lane ' +
      'waiting for its record before its next post: the least that "each attempt recorded durably" costs on this stack, without delivery rows, ' +
      'fan-out or leases.',
    '',
    '| Sender | In flight | Posts | Time | Per second | CPU per post | Ours ÷ this |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...f.rounds.map(
      (r, i) =>
        `| cauri delivery worker, round ${i + 1} | ≤ ${f.concurrency} | ${int(r.succeeded)} | ${secs(r.elapsedMs)} | ${int(r.perSecond)} | ${int(r.cpuUsPerDelivery)} µs | ${pct(r.perSecond / meanRate(f.bare.slice(i, i + 2)))} of the bare runs either side |`,
    ),
    `| **cauri delivery worker**, ${f.rounds.length} rounds | ≤ ${f.concurrency} | ${int(f.ours.succeeded)} | ${secs(f.ours.elapsedMs)} | ${int(f.ours.perSecond)} | ${int(f.ours.cpuUsPerDelivery)} µs | — |`,
    ...referenceRows('bare undici', f.bare, f.ours.perSecond),
    ...referenceRows('bare undici on `dispatch()`', f.bareDispatch, f.ours.perSecond),
    ...referenceRows('durable floor', f.floor, f.ours.perSecond),
    '',
    `Checks: ${int(f.ours.attempts)} attempt rows for ${int(f.ours.events)} events (${f.ours.failedAttempts} failed); the receiver saw ` +
      `${int(f.oursReceived.requests)} requests from the worker with ${int(f.oursReceived.distinctKeys)} distinct idempotency keys; ` +
      `the bare senders had ${[...f.bare, ...f.bareDispatch].reduce((a, b) => a + b.errors, 0)} errors.`,
    '',
    "### Where the worker's time goes",
    '',
    "The worker's own figures for this run (`DeliveryWorker.stats`, also on `/metrics` as `cauri_webhook_worker_seconds_total` and " +
      '`cauri_webhook_worker_units_total`). The running worker does its steps in one transaction per turn: the records of the attempts that ' +
      "ended, a claim of due deliveries (retries, and deliveries that waited for their endpoint's limit), the fan-out of new events into the " +
      "free slots; each step's time is its statements, and the begin and commit of the shared transaction are counted apart. On SQLite all " +
      "of it runs on the event loop (better-sqlite3 is synchronous), so its time is the loop's. The rest is signing, the HTTP exchange, " +
      'timers and garbage collection, on the same loop.',
    '',
    '| Step | Units | Time | Per unit | Per delivery | Share of the run |',
    '|---|---:|---:|---:|---:|---:|',
    ...steps(f),
    '',
    '## Latency',
    '',
    `On a fresh database with the worker running and idle, events were recorded at ${int(l.rate)} a second for ${l.warmupSeconds} s of warm-up ` +
      `and then ${l.seconds} s measured (${int(l.recorded)} events, ${int(l.achievedRate)} a second reached), each turn recording the events due by then ` +
      "in one small durable transaction (SQLite group commit), round-robin over the clients. The receiver measures each envelope's `created_at` " +
      '(set when the event is recorded, before its transaction commits) to the arrival of its first attempt; both processes read the machine clock.',
    '',
    '| Measure | p50 | p90 | p99 | max | mean |',
    '|---|---:|---:|---:|---:|---:|',
    lat === null
      ? '| Event to arrival at the receiver | — | — | — | — | — |'
      : `| Event to arrival at the receiver (${int(f.latencyReceived.counted)} events) | ${lat.p50} ms | ${lat.p90} ms | **${lat.p99} ms** | ${lat.max} ms | ${lat.mean.toFixed(1)} ms |`,
    l.dbLatency === null
      ? ''
      : `| Event to \`attempted_at\` as recorded by the worker | ${l.dbLatency.p50} ms | | ${l.dbLatency.p99} ms | ${l.dbLatency.max} ms | |`,
    '',
    `Goal: p99 < ${P99_GOAL_MS} ms. **${latencyMet ? 'Met' : 'Not met'}.** ` +
      `All ${int(l.recordedTotal)} events of the run were delivered (${int(l.succeeded)} succeeded, ${int(l.attempts)} attempts); ` +
      `the backlog was gone ${secs(l.drainMs)} after the last event was recorded.`,
    '',
    '## How to run',
    '',
    '```sh long',
    'npm run bench:webhooks                                   # rewrites this file (about a minute)',
    'BENCH_WEBHOOK_EVENTS=50000 BENCH_OUTPUT=/tmp/w.md npm run bench:webhooks',
    'BENCH_CPU_PROF=/tmp/prof npm run bench:webhooks          # .cpuprofile of the service steps',
    'node dist/bench/profile-summary.js /tmp/prof/<file>.cpuprofile',
    '```',
    '',
    '`BENCH_WEBHOOK_EVENTS` (default 20000) is the backlog of each round; `BENCH_WEBHOOK_ROUNDS` (default 5) the rounds; ' +
      '`BENCH_WEBHOOK_ENDPOINTS` (default 16) the clients with one endpoint each; ' +
      '`BENCH_WEBHOOK_RATE` (default 1000), `BENCH_WEBHOOK_SECONDS` (default 10) and `BENCH_WEBHOOK_WARMUP` (default 2) shape the latency step. ' +
      'Every side is its own process, started by the harness (bench/webhooks.ts): the receiver bench/webhook-receiver.ts (`node:http`, 204 at once), ' +
      'the service steps bench/webhook-service.ts (the runtime `cauri serve` builds, `CAURI_WORKERS=none`, plus the delivery worker started by the step) ' +
      'and the bare sender bench/webhook-bare-sender.ts. Children and the temporary data folders are removed at the end, also on failure.',
    '',
    '## How to read',
    '',
    '- The figures are **ratios measured back to back in one run** on a shared 2-core machine, where the receiver, the sender under test and ' +
      'the harness share the cores. Absolute rates vary from run to run by far more than the ratio; do not quote them as capacity.',
    '- The bare senders post these bodies from Node with nothing else: no database, no fan-out, no leases, no attempt records, no address ' +
      "check, no timeout. The one on `request()`, undici's ordinary API, is the reference the goal names (the goal was set against such a sender at " +
      "about 17,000 posts a second); the one on `dispatch()` is the least undici needs, and the API the worker's sender uses. The gap to " +
      'them is the cost of durable, exactly-recorded, retryable delivery.',
    '- The durable floor adds only the durable record of each post. The gap between it and the bare sender is what durability alone costs on ' +
      'one SQLite file with `synchronous=FULL`; the gap between ours and the floor is the rest of the delivery model (a delivery row per event ' +
      "and endpoint with its indexes, the fan-out, the lease that keeps several workers from sending one attempt twice, the delivery's new " +
      'state with each attempt, the body stored when an attempt fails).',
    '- With one endpoint the worker keeps at most ' +
      `${w.perEndpointConcurrency} attempts in flight to it (docs/webhooks.md), so a single receiver sees at most that concurrency; ` +
      `${f.endpoints} endpoints let the worker use its whole in-flight limit.`,
    '',
  ];
  return lines.join('\n');
}

/**
 * The webhook delivery benchmark (`npm run bench:webhooks`). Writes docs/benchmarks-webhooks.md.
 *
 * Every side runs in its own process: a bare `node:http` receiver (bench/webhook-receiver.ts), the
 * service with its delivery worker (bench/webhook-service.ts, one process per step) and a bare
 * undici sender (bench/webhook-bare-sender.ts). In one run:
 *
 * 1. throughput, in R rounds: N events are stored for E clients with one endpoint each at the
 *    receiver; the bare sender posts the same bodies, signed anew each time, to the same receiver with
 *    the worker's effective concurrency, min(E x per-endpoint limit, in-flight limit), through undici's
 *    request() (the goal's reference), then through dispatch() (the API of the worker's sender), then
 *    the durable floor does, then the delivery worker (default options) is started on that backlog and
 *    timed until every delivery is recorded as succeeded (each attempt in webhook_attempts, committed
 *    with synchronous=FULL). The three references run once more after the last round, so each of
 *    ours has a reference run on either side; the references are the means of their runs, ours the
 *    rate over all its rounds. Alternating keeps a slow spell of the shared machine from falling on
 *    one side only.
 * 2. latency: on a fresh database, with the worker running, events are recorded at a steady rate
 *    (default 1,000 a second, for 10 s after a 2 s warm-up); the receiver measures each envelope's
 *    `created_at` to its arrival.
 *
 * Goals (issue 6, item 6): ours >= 40 % of the bare sender; p99 event-to-delivery < 200 ms at
 * 1,000 events a second. A missed goal is reported, not an error; a failed step exits 1.
 *
 * Environment: BENCH_WEBHOOK_EVENTS (N, default 20000), BENCH_WEBHOOK_ENDPOINTS (E, default 16),
 * BENCH_WEBHOOK_ROUNDS (R, default 5),
 * BENCH_WEBHOOK_RATE (default 1000), BENCH_WEBHOOK_SECONDS (default 10), BENCH_WEBHOOK_WARMUP
 * (default 2), BENCH_OUTPUT (default docs/benchmarks-webhooks.md), BENCH_CPU_PROF (a folder: CPU
 * profiles of the service's deliver and latency steps).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultWebhookOptions } from '../src/webhooks/index.js';
import { killAllChildren, spawnServer, type ServerProcess } from './processes.js';
import type { BareResult } from './webhook-bare-sender.js';
import type { ReceiverStats } from './webhook-receiver.js';
import type { DeliverResult, LatencyResult, PrepareResult } from './webhook-service.js';
import { ROOT, together, render } from './webhooks-report.js';

const RECEIVER = fileURLToPath(new URL('./webhook-receiver.js', import.meta.url));
const SERVICE = fileURLToPath(new URL('./webhook-service.js', import.meta.url));
const BARE = fileURLToPath(new URL('./webhook-bare-sender.js', import.meta.url));

const log = (message: string) => process.stdout.write(`[bench:webhooks] ${message}\n`);

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return Number(raw);
}

// ----- Child processes ----------------------------------------------------------------------------

const children = new Set<ChildProcess>();

function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  killAllChildren();
}

/** Runs a bench script to completion and parses the JSON of its last stdout line; its stderr passes through. */
async function runStep<T>(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  options: { nodeArgs?: string[]; timeoutMs: number },
): Promise<T> {
  const child = spawn(process.execPath, ['--enable-source-maps', ...(options.nodeArgs ?? []), script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (stderr.length < 64_000) stderr += text;
    process.stderr.write(text);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const code = await new Promise<number | string>((resolve) => child.on('close', (c, signal) => resolve(c ?? signal ?? 'unknown')));
  clearTimeout(timer);
  children.delete(child);
  if (code !== 0)
    throw new Error(
      `${name} exited with ${code}${code === 'SIGKILL' ? ` (killed after ${options.timeoutMs} ms?)` : ''}:\n${stderr.slice(-4000)}`,
    );
  const last = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${name} printed no result:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  }
}

async function receiverReset(base: string, since = 0): Promise<void> {
  const res = await fetch(`${base}/reset?since=${since}`, { method: 'POST' });
  await res.arrayBuffer();
  if (res.status !== 204) throw new Error(`receiver reset answered ${res.status}`);
}

async function receiverStats(base: string): Promise<ReceiverStats> {
  const res = await fetch(`${base}/stats`);
  if (res.status !== 200) throw new Error(`receiver stats answered ${res.status}`);
  return (await res.json()) as ReceiverStats;
}

// ----- Report -------------------------------------------------------------------------------------

// ----- Main ---------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const events = positiveInteger('BENCH_WEBHOOK_EVENTS', 20_000);
  const endpoints = positiveInteger('BENCH_WEBHOOK_ENDPOINTS', 16);
  const roundsWanted = positiveInteger('BENCH_WEBHOOK_ROUNDS', 5);
  if (endpoints > 1000) throw new Error('BENCH_WEBHOOK_ENDPOINTS: at most 1000');
  const rate = positiveInteger('BENCH_WEBHOOK_RATE', 1000);
  const seconds = positiveInteger('BENCH_WEBHOOK_SECONDS', 10);
  const warmup = Number(process.env.BENCH_WEBHOOK_WARMUP ?? '2');
  if (!(warmup >= 0)) throw new Error('BENCH_WEBHOOK_WARMUP must be a number of seconds >= 0');
  const output = resolve(process.env.BENCH_OUTPUT ?? join(ROOT, 'docs/benchmarks-webhooks.md'));
  const cpuProfDir =
    process.env.BENCH_CPU_PROF === undefined || process.env.BENCH_CPU_PROF === '' ? null : resolve(process.env.BENCH_CPU_PROF);
  const profArgs = (name: string) =>
    cpuProfDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, `--cpu-prof-name=webhooks-${name}-${Date.now()}.cpuprofile`];
  if (cpuProfDir !== null) mkdirSync(cpuProfDir, { recursive: true });

  const started = new Date();
  const root = mkdtempSync(join(tmpdir(), 'cauri-bench-webhooks-'));
  let receiver: ServerProcess | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    killChildren();
    rmSync(root, { recursive: true, force: true });
    process.stderr.write(`[bench:webhooks] interrupted by ${signal}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    receiver = await spawnServer({ name: 'webhook receiver', script: RECEIVER, env: { PORT: '0' }, ready: { kind: 'address-line' } });
    log(`receiver at ${receiver.base} (pid ${receiver.pid}); data in ${root}`);
    const base = { BENCH_MASTER_KEY: randomBytes(32).toString('hex'), BENCH_RECEIVER: receiver.base, BENCH_ENDPOINTS: String(endpoints) };

    // The worker's effective concurrency against these endpoints, from its own defaults.
    const defaults = defaultWebhookOptions();
    const concurrency = Math.min(endpoints * defaults.perEndpointConcurrency, defaults.maxInFlight);
    const bare: BareResult[] = [];
    const bareDispatch: BareResult[] = [];
    const floor: BareResult[] = [];
    const rounds: DeliverResult[] = [];
    const oursReceived = { requests: 0, distinctKeys: 0 };
    let firstPrepare: PrepareResult | null = null;
    let previousDir: string | null = null;
    /** The bare sender's environment for the bodies of the latest round. */
    let bareEnv: Record<string, string> = {};
    const runBare = async (when: string, kind: 'request' | 'dispatch' | 'durable') => {
      await receiverReset(receiver!.base);
      const durable = kind === 'durable';
      const name = durable ? 'bare undici + durable record' : kind === 'dispatch' ? 'bare undici on dispatch()' : 'bare undici';
      const env = durable
        ? { ...bareEnv, BENCH_RECORD_SQLITE: join(root, `floor-${when.replace(/\W+/g, '-')}.sqlite`) }
        : { ...bareEnv, BENCH_BARE_API: kind };
      const result = await runStep<BareResult>(name, BARE, [], env, { timeoutMs: 120_000 });
      const seen = await receiverStats(receiver!.base);
      if (seen.requests !== result.posts || result.errors > 0)
        throw new Error(`${name} (${when}): ${result.posts} posts, ${result.errors} errors, receiver saw ${seen.requests}`);
      log(
        `${name} (${when}): ${result.posts} posts in ${result.elapsedMs.toFixed(0)} ms, ${result.perSecond.toFixed(0)}/s at ${concurrency} in flight, ${result.cpuUsPerPost.toFixed(0)} µs CPU a post`,
      );
      (durable ? floor : kind === 'dispatch' ? bareDispatch : bare).push(result);
    };
    for (let round = 1; round <= roundsWanted; round++) {
      const throughputDir = join(root, `throughput-${round}`);
      log(`round ${round} of ${roundsWanted}: preparing ${events} events for ${endpoints} endpoints`);
      const prepare = await runStep<PrepareResult>(
        'prepare',
        SERVICE,
        ['prepare'],
        { ...base, BENCH_DATA_DIR: throughputDir, BENCH_EVENTS: String(events) },
        { timeoutMs: 120_000 },
      );
      firstPrepare ??= prepare;
      if (previousDir !== null) rmSync(previousDir, { recursive: true, force: true });
      previousDir = throughputDir;
      const endpointsFile = join(root, `endpoints-${round}.json`);
      writeFileSync(endpointsFile, JSON.stringify(prepare.endpoints));
      bareEnv = {
        BENCH_SQLITE: join(throughputDir, 'cauri.sqlite'),
        BENCH_ENDPOINTS_FILE: endpointsFile,
        BENCH_CONCURRENCY: String(concurrency),
      };
      await runBare(`before round ${round}`, 'request');
      await runBare(`before round ${round}`, 'dispatch');
      await runBare(`before round ${round}`, 'durable');
      await receiverReset(receiver.base);
      log(`round ${round}: delivery worker on the backlog`);
      const ours = await runStep<DeliverResult>(
        'deliver',
        SERVICE,
        ['deliver'],
        { ...base, BENCH_DATA_DIR: throughputDir, BENCH_EVENTS: String(events) },
        { nodeArgs: profArgs(`deliver-${round}`), timeoutMs: 170_000 },
      );
      const seen = await receiverStats(receiver.base);
      log(
        `ours: ${ours.succeeded} delivered in ${ours.elapsedMs.toFixed(0)} ms, ${ours.perSecond.toFixed(0)}/s, ${ours.cpuUsPerDelivery.toFixed(0)} µs CPU a delivery; ${ours.attempts} attempts recorded, receiver saw ${seen.requests}`,
      );
      if (ours.succeeded !== events || ours.attempts !== events || ours.failedAttempts !== 0) {
        throw new Error(
          `deliver: expected ${events} succeeded deliveries and attempts, got ${ours.succeeded} succeeded, ${ours.attempts} attempts (${ours.failedAttempts} failed)`,
        );
      }
      rounds.push(ours);
      oursReceived.requests += seen.requests;
      oursReceived.distinctKeys += seen.distinctKeys;
    }
    // The last round's bodies once more, after it.
    await runBare('after the last round', 'request');
    await runBare('after the last round', 'dispatch');
    await runBare('after the last round', 'durable');
    if (previousDir !== null) rmSync(previousDir, { recursive: true, force: true });
    const prepare = firstPrepare!;
    const ours = together(rounds);

    log(`latency: ${rate} events/s for ${warmup} s warm-up + ${seconds} s`);
    await receiverReset(receiver.base);
    const latency = await runStep<LatencyResult>(
      'latency',
      SERVICE,
      ['latency'],
      {
        ...base,
        BENCH_DATA_DIR: join(root, 'latency'),
        BENCH_RATE: String(rate),
        BENCH_SECONDS: String(seconds),
        BENCH_WARMUP_SECONDS: String(warmup),
      },
      { nodeArgs: profArgs('latency'), timeoutMs: 120_000 + (seconds + warmup) * 1000 },
    );
    const latencyReceived = await receiverStats(receiver.base);
    const lat = latencyReceived.latency;
    log(
      `latency: ${latency.recorded} events at ${latency.achievedRate.toFixed(0)}/s; receiver p50 ${lat?.p50} ms, p99 ${lat?.p99} ms, max ${lat?.max} ms` +
        (latency.dbLatency === null ? '' : `; recorded attempt p50 ${latency.dbLatency.p50} ms, p99 ${latency.dbLatency.p99} ms`),
    );

    const report = render({
      started,
      finished: new Date(),
      events: events * roundsWanted,
      endpoints,
      concurrency,
      prepare,
      rounds,
      ours,
      oursReceived,
      bare,
      bareDispatch,
      floor,
      latency,
      latencyReceived,
    });
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, report);
    log(`report written to ${output}`);
    return 0;
  } finally {
    if (receiver !== null) await receiver.stop();
    killChildren();
    rmSync(root, { recursive: true, force: true });
    if (cpuProfDir !== null)
      log(`CPU profiles of the service steps in ${cpuProfDir} (summarise: node dist/bench/profile-summary.js <file>)`);
  }
}

process.on('exit', () => killChildren());
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[bench:webhooks] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

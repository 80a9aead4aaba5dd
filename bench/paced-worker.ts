import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { Measurement } from './load.js';

/** A paced run's measurement, and how late the load generator itself ran. */
export interface PacedMeasurement extends Measurement {
  /** The generator's own event-loop delay over the run (ms): its p99 and its longest stall. */
  generatorDelay: { p99: number; max: number };
}

export interface PacedSettings {
  connections: number;
  duration: number;
  rate: number;
  /** Seconds sent first and not counted (default 2). */
  warmup?: number;
  /** A header given a fresh random UUID on every request (an idempotency key), if any. */
  freshUuidHeader?: string;
}

export interface PacedWork {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  settings: PacedSettings;
}

export interface PacedOutcome {
  measurement: PacedMeasurement;
  problems: [string, number][];
}

/** The paced load of paced.ts, on the worker thread it starts. */
async function run(work: PacedWork): Promise<PacedOutcome> {
  const { settings } = work;
  const url = new URL(work.url);
  const pool = new Pool(url.origin, { connections: settings.connections, pipelining: 1 });
  const interval = 1000 / settings.rate;
  const fresh = settings.freshUuidHeader;
  // The pool's connections are opened and the code paths compiled during the warm-up, at the same rate.
  const skipped = Math.round(settings.rate * (settings.warmup ?? 2));
  const total = skipped + Math.max(1, Math.round(settings.rate * settings.duration));
  const latencies = new Float64Array(total - skipped);
  let answered = 0;
  const problems = new Map<string, number>();
  const note = (what: string) => problems.set(what, (problems.get(what) ?? 0) + 1);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const started = performance.now();
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let measuredFrom = 0;
  const send = (due: number, counted: boolean) => {
    inFlight++;
    pool
      .request({
        path: `${url.pathname}${url.search}`,
        method: work.method as 'GET',
        headers: fresh === undefined ? work.headers : { ...work.headers, [fresh]: randomUUID() },
        body: work.body,
      })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) {
          if (counted) latencies[answered++] = performance.now() - due;
        } else note(`status ${res.statusCode}`);
      })
      .catch((error: unknown) => note(error instanceof Error ? error.message : String(error)))
      .finally(() => {
        if (--inFlight === 0) drained?.();
      });
  };
  try {
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      if (i === skipped) {
        measuredFrom = due;
        delay.enable();
      }
      send(due, i >= skipped);
    }
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
  } finally {
    delay.disable();
    await pool.close();
  }
  const seconds = (performance.now() - measuredFrom) / 1000;
  const measured = latencies.subarray(0, answered).sort();
  const at = (q: number) => Math.round(measured[Math.min(measured.length - 1, Math.floor(q * measured.length))] ?? 0);
  const ms = (ns: number) => Math.round((ns / 1e6) * 10) / 10;
  return {
    measurement: {
      rps: answered / seconds,
      p50: at(0.5),
      p99: at(0.99),
      ok: answered,
      seconds,
      generatorDelay: { p99: ms(delay.percentile(99)), max: ms(delay.max) },
    },
    problems: [...problems],
  };
}

if (parentPort !== null) {
  const port = parentPort;
  run(workerData as PacedWork).then(
    (outcome) => port.postMessage(outcome),
    (error: unknown) => {
      throw error;
    },
  );
}

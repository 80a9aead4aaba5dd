import { Pool } from 'undici';
import { ScenarioError, type LoadTarget, type Measurement } from './load.js';

/**
 * Requests sent at a steady rate, spaced evenly, whatever the answers' pace (an open loop, as users
 * arrive): the load for a latency read below the maximum. autocannon's own rate limit lets each
 * connection send its quota for the second as fast as answers come, then wait for the next second,
 * so its "half the maximum" is the maximum for half of each second.
 *
 * Each request's latency counts from the moment it was due, not from when a connection was free to
 * send it: time spent waiting for a connection is part of what a user waits (no coordinated omission).
 */
export async function measurePaced(
  label: string,
  target: LoadTarget,
  settings: { connections: number; duration: number; rate: number /** Seconds sent first and not counted (default 2). */; warmup?: number },
): Promise<Measurement> {
  if (target.url === undefined || target.requests !== undefined) {
    throw new ScenarioError(`${label}: a paced run takes one request (url, method, headers, body)`);
  }
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections: settings.connections, pipelining: 1 });
  const interval = 1000 / settings.rate;
  // The pool's connections are opened and the code paths compiled during the warm-up, at the same rate.
  const skipped = Math.round(settings.rate * (settings.warmup ?? 2));
  const total = skipped + Math.max(1, Math.round(settings.rate * settings.duration));
  const latencies: number[] = [];
  const problems = new Map<string, number>();
  const note = (what: string) => problems.set(what, (problems.get(what) ?? 0) + 1);
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let measuredFrom = 0;
  const send = (due: number, counted: boolean) => {
    const request = pool
      .request({
        path: `${url.pathname}${url.search}`,
        method: (target.method ?? 'GET') as 'GET',
        headers: target.headers as Record<string, string> | undefined,
        body: typeof target.body === 'string' ? target.body : undefined,
      })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) {
          if (counted) latencies.push(performance.now() - due);
        } else note(`status ${res.statusCode}`);
      })
      .catch((error: unknown) => {
        note(error instanceof Error ? error.message : String(error));
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  try {
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      if (i === skipped) measuredFrom = due;
      send(due, i >= skipped);
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - measuredFrom) / 1000;
  if (problems.size > 0) {
    throw new ScenarioError(`${label}: ${[...problems].map(([what, n]) => `${n} × ${what}`).join('; ')}`);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return { rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), ok: latencies.length, seconds };
}

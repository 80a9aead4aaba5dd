import { Worker } from 'node:worker_threads';
import { ScenarioError, type LoadTarget } from './load.js';
import type { PacedMeasurement, PacedSettings, PacedWork, PacedOutcome } from './paced-worker.js';

export type { PacedMeasurement } from './paced-worker.js';

/**
 * Requests sent at a steady rate, spaced evenly, whatever the answers' pace (an open loop, as users
 * arrive): the load for a latency read below the maximum. autocannon's own rate limit lets each
 * connection send its quota for the second as fast as answers come, then wait for the next second,
 * so its "half the maximum" is the maximum for half of each second.
 *
 * Each request's latency counts from the moment it was due, not from when a connection was free to
 * send it: time spent waiting for a connection is part of what a user waits (no coordinated omission).
 * The generator runs on a thread of its own (paced-worker.ts), with its own heap: a pause of the
 * harness (its garbage collection, its other work) would otherwise delay the sends and be counted as
 * the service's latency. Its own event-loop delay is measured and reported with the figures.
 */
export async function measurePaced(label: string, target: LoadTarget, settings: PacedSettings): Promise<PacedMeasurement> {
  const one = target.requests?.length === 1 ? target.requests[0] : undefined;
  if (target.url === undefined || (target.requests !== undefined && one === undefined)) {
    throw new ScenarioError(`${label}: a paced run takes one request (url, method, headers, body)`);
  }
  const url = new URL(target.url);
  const body = one?.body ?? target.body;
  const work: PacedWork = {
    url: one?.path === undefined ? target.url : `${url.origin}${one.path}`,
    method: one?.method ?? target.method ?? 'GET',
    headers: ((one?.headers ?? target.headers) as Record<string, string> | undefined) ?? {},
    body: typeof body === 'string' ? body : undefined,
    settings,
  };
  const outcome = await new Promise<PacedOutcome>((resolve, reject) => {
    const worker = new Worker(new URL('./paced-worker.js', import.meta.url), { workerData: work });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${label}: the load generator exited (${code}) without its figures`)));
  });
  if (outcome.problems.length > 0) {
    throw new ScenarioError(`${label}: ${outcome.problems.map(([what, n]) => `${n} × ${what}`).join('; ')}`);
  }
  return outcome.measurement;
}

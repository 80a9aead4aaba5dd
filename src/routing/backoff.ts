/**
 * Delay before the next hand-over attempt to an unavailable partner: 1 s doubling to at most 60 s,
 * with ±10% jitter so that orders queued behind one outage do not retry in lock-step.
 */
export function routeBackoffMs(attempts: number, random: () => number): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.9 + 0.2 * random()));
}

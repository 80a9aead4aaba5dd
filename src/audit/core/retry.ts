/**
 * When the anchoring step runs again after a failure: the delay after the n-th consecutive failure
 * (1-based), then the last value forever. Anchoring never gives up: a snapshot is served only once
 * anchored, so an operator fixes the cause (the error is on the row and in the log) and it resumes.
 */
export const ANCHOR_RETRY_SCHEDULE_MS = [5_000, 15_000, 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000] as const;

/** How often a submitted transaction is polled for its receipt. */
export const ANCHOR_POLL_MS = 15_000;

/**
 * The delay before retry after `failures` consecutive failures, with +/-20% jitter so that the
 * processes of a deployment (and deployments sharing a node) do not retry in lock-step.
 * `random` is in [0, 1).
 */
export function anchorRetryDelay(failures: number, random: number): number {
  const schedule = ANCHOR_RETRY_SCHEDULE_MS;
  const base = schedule[Math.min(Math.max(failures, 1), schedule.length) - 1]!;
  return Math.round(base * (0.8 + 0.4 * random));
}

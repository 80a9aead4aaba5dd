/**
 * The delivery retry policy, as data plus pure functions (after svix `core/retry`).
 *
 * docs/webhooks.md: attempts at these offsets from the first attempt: 0, then at once, +30 s,
 * +5 min, +30 min, +2 h, +6 h, +24 h; when the +24 h attempt fails the delivery is dead (dead-letter
 * queue). Offsets are measured from the first attempt's scheduled time, not from the previous
 * attempt, so slow or timed-out attempts (up to 10 s each) do not stretch the 24 h window.
 *
 * A fixed schedule makes every endpoint that failed together retry together (svix#533), so each
 * scheduled offset gets a small jitter; see `jitter` for the exact bounds.
 */

/** Offset of attempt n+1 from the first attempt, in milliseconds; one entry per attempt. */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  0, // first attempt
  0, // retry at once
  30_000, // +30 s
  300_000, // +5 min
  1_800_000, // +30 min
  7_200_000, // +2 h
  21_600_000, // +6 h
  86_400_000, // +24 h: the last; if it fails the delivery is dead
]);

/** Attempts per delivery, first one included. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;

/** Jitter is at most this fraction of the gap between an offset and the scheduled offset before it. */
export const JITTER_FRACTION = 0.1;

/** ...and never more than this, so the last attempt stays within +24 h ± 5 min. */
export const MAX_JITTER_MS = 5 * 60_000;

/**
 * The jitter, in whole milliseconds, to add to a scheduled offset.
 *
 * Let `previous` be the greatest offset of `RETRY_SCHEDULE_MS` strictly below `offsetMs` (0 if
 * none) and `spread = min(floor((offsetMs - previous) × 10%), 5 min)`. The result is
 * `round((2 × random() - 1) × spread)`, which lies in [-spread, +spread]: random() = 0 gives -spread,
 * 0.5 gives 0, values near 1 give +spread. Consequences, all relied on by the worker:
 * - the immediate attempts (offset 0) have no jitter: "at once" means at once;
 * - jittered offsets never go backwards, whatever `random` returns: the two immediate attempts
 *   share offset 0 and every later one is strictly later than the one before it. Each offset moves
 *   by at most 10% of the gap below it, and the gaps grow (30 s, 4.5 min, 25 min, 1.5 h, 4 h, 18 h),
 *   so 90% of a gap always exceeds 10% of the gap before it;
 * - no attempt moves by more than 5 min; in particular the last one is due within
 *   [+24 h - 5 min, +24 h + 5 min] of the first attempt.
 * Resulting spreads: ±3 s, ±27 s, ±2.5 min, then ±5 min for the +2 h, +6 h and +24 h attempts.
 *
 * Preconditions: `offsetMs` is a finite number ≥ 0; `random()` returns a number in [0, 1] (Math.random
 * or a seeded source in tests). RangeError otherwise, since a broken source must not silently move
 * attempts outside the documented bounds.
 */
export function jitter(offsetMs: number, random: () => number): number {
  if (!Number.isFinite(offsetMs) || offsetMs < 0) throw new RangeError(`offset must be a finite number ≥ 0, got ${offsetMs}`);
  let previous = 0;
  for (const scheduled of RETRY_SCHEDULE_MS) {
    if (scheduled < offsetMs && scheduled > previous) previous = scheduled;
  }
  const spread = Math.min(Math.floor((offsetMs - previous) * JITTER_FRACTION), MAX_JITTER_MS);
  if (spread === 0) return 0;
  const r = random();
  if (!(r >= 0 && r <= 1)) throw new RangeError(`random() must return a number in [0, 1], got ${r}`);
  // `+ 0` turns a -0 from Math.round into 0.
  return Math.round((2 * r - 1) * spread) + 0;
}

/**
 * When the next attempt is due, in epoch milliseconds, or null when the delivery is dead.
 *
 * `attemptsMade` counts the attempts already made (the first included), so after the first attempt
 * fails call it with 1, and with 8 after the +24 h attempt: null. With 0 it returns the first
 * attempt's own time. The result is `firstAttemptAt + RETRY_SCHEDULE_MS[attemptsMade] +
 * jitter(that offset, random)`. It may lie in the past when the worker has fallen behind; the worker
 * then makes the attempt at once rather than shifting the rest of the schedule.
 *
 * Preconditions: `firstAttemptAt` is finite; `attemptsMade` is an integer ≥ 0 (RangeError otherwise).
 */
export function nextAttemptAt(firstAttemptAt: number, attemptsMade: number, random: () => number): number | null {
  if (!Number.isFinite(firstAttemptAt)) throw new RangeError(`firstAttemptAt must be finite, got ${firstAttemptAt}`);
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0) {
    throw new RangeError(`attemptsMade must be an integer ≥ 0, got ${attemptsMade}`);
  }
  const offset = RETRY_SCHEDULE_MS[attemptsMade];
  if (offset === undefined) return null;
  return firstAttemptAt + offset + jitter(offset, random);
}

/** True when `attemptsMade` failed attempts exhaust the schedule (dead-letter queue). */
export function isDead(attemptsMade: number): boolean {
  return attemptsMade >= MAX_ATTEMPTS;
}

/** A delivery's state after an attempt: succeeded, due again at its next scheduled time, or dead. */
export function afterAttempt(
  delivery: { attempts: number; first_attempt_at: number },
  succeeded: boolean,
  random: () => number,
): { status: 'succeeded' | 'pending' | 'dead'; attempts: number; next_attempt_at: number | null } {
  const attempts = delivery.attempts + 1;
  if (succeeded) return { status: 'succeeded', attempts, next_attempt_at: null };
  // A replayed delivery has used up the schedule already, so its failed attempt leaves it dead again.
  const next = nextAttemptAt(delivery.first_attempt_at, attempts, random);
  return next === null ? { status: 'dead', attempts, next_attempt_at: null } : { status: 'pending', attempts, next_attempt_at: next };
}

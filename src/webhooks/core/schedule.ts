/**
 * The delivery retry policy, as data plus pure functions (after svix `core/retry`).
 *
 * docs/webhooks.md: attempts at these offsets from the first attempt: 0, then at once, +30 s,
 * +5 min, +30 min, +2 h, +6 h, +24 h; when the +24 h attempt fails the delivery is dead (dead-letter
 * queue). Offsets are measured from the time the first attempt was made (which may be later than
 * the delivery was created, when its endpoint was at its limit or disabled), not from the previous
 * attempt, so slow or timed-out attempts (up to 10 s each) do not stretch the 24 h window.
 *
 * Each attempt is due exactly at its offset, never before; the worker sends it when it next looks
 * for due deliveries with a slot free, so it may be a little later. The +24 h attempt, and so the
 * dead letter, never come before 24 h. There is no jitter: deliveries of different events begin at
 * different times, and those that fall due together (one event's deliveries to many endpoints) are
 * paced by the worker's slots and per-endpoint limit, earliest due first.
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

/**
 * When the next attempt is due, in epoch milliseconds, or null when the delivery is dead.
 *
 * `attemptsMade` counts the attempts already made (the first included), so after the first attempt
 * fails call it with 1, and with 8 after the +24 h attempt: null. With 0 it returns the first
 * attempt's own time. The result is `firstAttemptAt + RETRY_SCHEDULE_MS[attemptsMade]`. It may
 * lie in the past when the worker has fallen behind; the worker then makes the attempt at once
 * rather than shifting the rest of the schedule.
 *
 * Preconditions: `firstAttemptAt` is finite; `attemptsMade` is an integer ≥ 0 (RangeError otherwise).
 */
export function nextAttemptAt(firstAttemptAt: number, attemptsMade: number): number | null {
  if (!Number.isFinite(firstAttemptAt)) throw new RangeError(`firstAttemptAt must be finite, got ${firstAttemptAt}`);
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0) {
    throw new RangeError(`attemptsMade must be an integer ≥ 0, got ${attemptsMade}`);
  }
  const offset = RETRY_SCHEDULE_MS[attemptsMade];
  if (offset === undefined) return null;
  return firstAttemptAt + offset;
}

/** True when `attemptsMade` failed attempts exhaust the schedule (dead-letter queue). */
export function isDead(attemptsMade: number): boolean {
  return attemptsMade >= MAX_ATTEMPTS;
}

/**
 * A delivery's state after an attempt made at `attemptedAt`: succeeded, due again at its next
 * scheduled time, or dead. The first attempt sets the time the schedule counts from.
 */
export function afterAttempt(
  delivery: { attempts: number; first_attempt_at: number },
  succeeded: boolean,
  attemptedAt: number,
): { status: 'succeeded' | 'pending' | 'dead'; attempts: number; first_attempt_at: number; next_attempt_at: number | null } {
  const attempts = delivery.attempts + 1;
  const first = delivery.attempts === 0 ? attemptedAt : delivery.first_attempt_at;
  if (succeeded) return { status: 'succeeded', attempts, first_attempt_at: first, next_attempt_at: null };
  // A replayed delivery has used up the schedule already, so its failed attempt leaves it dead again.
  const next = nextAttemptAt(first, attempts);
  return { status: next === null ? 'dead' : 'pending', attempts, first_attempt_at: first, next_attempt_at: next };
}

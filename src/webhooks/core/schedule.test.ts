import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS, afterAttempt, isDead, nextAttemptAt } from './schedule.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const FIRST = Date.parse('2026-11-22T10:00:00.000Z');

test('the schedule is the documented one: 0, at once, +30 s, +5 min, +30 min, +2 h, +6 h, +24 h', () => {
  assert.deepEqual(RETRY_SCHEDULE_MS, [0, 0, 30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR]);
  assert.equal(MAX_ATTEMPTS, 8);
  assert.ok(Object.isFrozen(RETRY_SCHEDULE_MS));
});

test('nextAttemptAt: each attempt is due exactly at its offset from the first attempt, dead after the +24 h one', () => {
  const due: number[] = [];
  for (let made = 0; ; made++) {
    const next = nextAttemptAt(FIRST, made);
    if (next === null) {
      assert.equal(made, MAX_ATTEMPTS, 'dead exactly after the 8th attempt');
      break;
    }
    due.push(next);
  }
  assert.deepEqual(
    due.map((at) => at - FIRST),
    [0, 0, 30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR],
  );
});

test('afterAttempt: the first attempt made sets the time the offsets count from', () => {
  const created = FIRST - 10 * MINUTE;
  // The delivery waited 10 minutes for its endpoint: the schedule starts at its first attempt.
  let delivery = { attempts: 0, first_attempt_at: created };
  const seen: number[] = [];
  let attemptedAt = FIRST;
  for (;;) {
    const next = afterAttempt(delivery, false, attemptedAt);
    assert.equal(next.first_attempt_at, FIRST);
    seen.push(attemptedAt - FIRST);
    if (next.status === 'dead') {
      assert.equal(next.next_attempt_at, null);
      assert.equal(next.attempts, MAX_ATTEMPTS);
      break;
    }
    assert.equal(next.status, 'pending');
    const due = next.next_attempt_at as number;
    // The worker may be late (here by 2 s at every attempt); the schedule does not move.
    attemptedAt = due + 2 * SECOND;
    delivery = { attempts: next.attempts, first_attempt_at: next.first_attempt_at };
  }
  assert.deepEqual(
    seen,
    RETRY_SCHEDULE_MS.map((offset, i) => offset + (i === 0 ? 0 : 2 * SECOND)),
  );
  assert.ok((seen.at(-1) as number) >= 24 * HOUR, 'the dead letter never before 24 h after the first attempt');
});

test('afterAttempt: success ends the schedule; a replayed delivery that fails is dead again', () => {
  assert.deepEqual(afterAttempt({ attempts: 3, first_attempt_at: FIRST }, true, FIRST + 5 * MINUTE), {
    status: 'succeeded',
    attempts: 4,
    first_attempt_at: FIRST,
    next_attempt_at: null,
  });
  const replayedAt = FIRST + 3 * 24 * HOUR;
  assert.deepEqual(afterAttempt({ attempts: 8, first_attempt_at: replayedAt }, false, replayedAt), {
    status: 'dead',
    attempts: 9,
    first_attempt_at: replayedAt,
    next_attempt_at: null,
  });
});

test('nextAttemptAt: null once the schedule is exhausted; isDead agrees; bad input is refused', () => {
  for (const made of [8, 9, 100]) {
    assert.equal(nextAttemptAt(FIRST, made), null);
    assert.equal(isDead(made), true);
  }
  for (let made = 0; made < 8; made++) assert.equal(isDead(made), false);
  assert.equal(nextAttemptAt(FIRST, 0), FIRST);
  for (const made of [-1, 1.5, Number.NaN]) assert.throws(() => nextAttemptAt(FIRST, made), RangeError);
  assert.throws(() => nextAttemptAt(Number.NaN, 1), RangeError);
});

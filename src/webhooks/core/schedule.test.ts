import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JITTER_FRACTION, MAX_ATTEMPTS, MAX_JITTER_MS, RETRY_SCHEDULE_MS, isDead, jitter, nextAttemptAt } from './schedule.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const FIRST = Date.parse('2026-11-22T10:00:00.000Z');

// The extremes and the middle of [0, 1), plus the largest double below 1.
const RANDOMS = [0, 0.5, 0.999, 1 - Number.EPSILON / 2];
const fixed = (r: number) => () => r;

/** A small deterministic generator (mulberry32), to sweep many values reproducibly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('the schedule is the documented one: 0, at once, +30 s, +5 min, +30 min, +2 h, +6 h, +24 h', () => {
  assert.deepEqual(RETRY_SCHEDULE_MS, [0, 0, 30 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR]);
  assert.equal(MAX_ATTEMPTS, 8);
  assert.ok(Object.isFrozen(RETRY_SCHEDULE_MS));
});

test('jitter: zero for the immediate attempts, whatever random returns', () => {
  for (const r of RANDOMS) assert.equal(jitter(0, fixed(r)), 0);
  let called = false;
  jitter(0, () => {
    called = true;
    return 0;
  });
  assert.equal(called, false, 'no randomness is drawn when there is nothing to spread');
});

test('jitter: ±10% of the gap below the offset, capped at 5 min, exact at the extremes', () => {
  const expectedSpread = new Map<number, number>([
    [30 * SECOND, 3 * SECOND],
    [5 * MINUTE, 27 * SECOND],
    [30 * MINUTE, 150 * SECOND],
    [2 * HOUR, 5 * MINUTE], // 9 min uncapped
    [6 * HOUR, 5 * MINUTE],
    [24 * HOUR, 5 * MINUTE],
  ]);
  for (const [offset, spread] of expectedSpread) {
    assert.equal(jitter(offset, fixed(0)), -spread, `random 0 at ${offset}`);
    assert.equal(jitter(offset, fixed(0.5)), 0, `random 0.5 at ${offset}`);
    assert.equal(jitter(offset, fixed(1)), spread, `random 1 at ${offset}`);
    const nearTop = jitter(offset, fixed(1 - Number.EPSILON / 2));
    assert.ok(nearTop <= spread && nearTop >= spread - 1, `random just below 1 at ${offset}`);
    assert.equal(jitter(offset, fixed(0.75)), Math.round(spread / 2));
  }
  assert.equal(JITTER_FRACTION, 0.1);
  assert.equal(MAX_JITTER_MS, 5 * MINUTE);
});

test('jitter returns whole milliseconds and never -0', () => {
  const random = seeded(7);
  for (let i = 0; i < 2000; i++) {
    for (const offset of RETRY_SCHEDULE_MS) {
      const j = jitter(offset, random);
      assert.ok(Number.isInteger(j));
      assert.ok(!Object.is(j, -0));
    }
  }
  assert.ok(!Object.is(jitter(30 * SECOND, fixed(0.5)), -0));
});

test('jitter refuses a broken random source and a bad offset', () => {
  for (const r of [-0.1, 1.5, Number.NaN]) assert.throws(() => jitter(30 * SECOND, fixed(r)), RangeError, String(r));
  for (const offset of [-1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => jitter(offset, fixed(0.5)), RangeError);
});

/** Every due time of one delivery, by failing every attempt, until the schedule reports it dead. */
function wholeSchedule(random: () => number): number[] {
  const due: number[] = [];
  for (let made = 0; ; made++) {
    const next = nextAttemptAt(FIRST, made, random);
    if (next === null) {
      assert.equal(made, MAX_ATTEMPTS, 'dead exactly after the 8th attempt');
      return due;
    }
    due.push(next);
  }
}

function assertScheduleInvariants(due: number[], label: string): void {
  assert.equal(due.length, 8, label);
  assert.equal(due[0], FIRST, `${label}: the first attempt is not moved`);
  assert.equal(due[1], FIRST, `${label}: the retry "at once" is not moved`);
  for (let i = 2; i < due.length; i++) {
    assert.ok((due[i] as number) > (due[i - 1] as number), `${label}: attempt ${i + 1} after attempt ${i}`);
  }
  due.forEach((at, i) => {
    const offset = RETRY_SCHEDULE_MS[i] as number;
    assert.ok(Math.abs(at - FIRST - offset) <= MAX_JITTER_MS, `${label}: attempt ${i + 1} within 5 min of its offset`);
    const previous = i === 0 ? 0 : (RETRY_SCHEDULE_MS[i - 1] as number);
    assert.ok(Math.abs(at - FIRST - offset) <= (offset - previous) * JITTER_FRACTION, `${label}: attempt ${i + 1} within 10% of its gap`);
  });
  const last = due[7] as number;
  assert.ok(last >= FIRST + 24 * HOUR - 5 * MINUTE && last <= FIRST + 24 * HOUR + 5 * MINUTE, `${label}: last attempt near +24 h`);
}

test('nextAttemptAt over the whole schedule with random 0, 0.5 and 0.999…: monotonic, bounded, dead after 8', () => {
  for (const r of RANDOMS) assertScheduleInvariants(wholeSchedule(fixed(r)), `random ${r}`);
  assert.deepEqual(
    wholeSchedule(fixed(0.5)),
    RETRY_SCHEDULE_MS.map((offset) => FIRST + offset),
    'random 0.5 gives the schedule exactly',
  );
  assert.deepEqual(
    wholeSchedule(fixed(0)).map((at) => at - FIRST),
    [0, 0, 27 * SECOND, 273 * SECOND, 1650 * SECOND, 2 * HOUR - 5 * MINUTE, 6 * HOUR - 5 * MINUTE, 24 * HOUR - 5 * MINUTE],
  );
});

test('the invariants hold for any draw: adversarial mixes of extremes and a seeded sweep', () => {
  // Alternating extremes pull each attempt towards its neighbour as hard as possible.
  const alternating = (start: number) => {
    let k = start;
    return () => (k++ % 2 === 0 ? 1 : 0);
  };
  assertScheduleInvariants(wholeSchedule(alternating(0)), 'alternating from 1');
  assertScheduleInvariants(wholeSchedule(alternating(1)), 'alternating from 0');
  for (let seed = 1; seed <= 500; seed++) assertScheduleInvariants(wholeSchedule(seeded(seed)), `seed ${seed}`);
});

test('jitter actually spreads endpoints that failed together', () => {
  const random = seeded(42);
  const times = new Set<number>();
  for (let endpoint = 0; endpoint < 100; endpoint++) times.add(nextAttemptAt(FIRST, 5, random) as number);
  assert.ok(times.size > 90, `100 endpoints retrying at +2 h got ${times.size} distinct times`);
});

test('nextAttemptAt: null once the schedule is exhausted; isDead agrees; bad input is refused', () => {
  for (const made of [8, 9, 100]) {
    assert.equal(nextAttemptAt(FIRST, made, fixed(0.5)), null);
    assert.equal(isDead(made), true);
  }
  for (let made = 0; made < 8; made++) assert.equal(isDead(made), false);
  assert.equal(nextAttemptAt(FIRST, 0, fixed(0.9)), FIRST);
  for (const made of [-1, 1.5, Number.NaN]) assert.throws(() => nextAttemptAt(FIRST, made, fixed(0.5)), RangeError);
  assert.throws(() => nextAttemptAt(Number.NaN, 1, fixed(0.5)), RangeError);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InboundSequence } from './inbound-sequence.js';
import { sessionWindow } from './session-window.js';
import { reconnectDelayMs } from './session-runner.js';

test('the committed sequence number advances only over messages dealt with, never past a gap', () => {
  const s = new InboundSequence(5);
  s.done(5);
  assert.equal(s.next, 6);
  // 7 and 8 arrive before 6 (6 is owed): applied, but the number to commit stays 6.
  s.done(7);
  s.done(8);
  assert.equal(s.next, 6);
  s.done(6);
  assert.equal(s.next, 9);
  // Numbers already dealt with change nothing.
  s.done(3);
  assert.equal(s.next, 9);
});

test('a gap fill covers the numbers it names; a reset starts from its new number', () => {
  const s = new InboundSequence(10);
  s.done(14);
  s.gapFill(10, 14);
  assert.equal(s.next, 15);
  s.gapFill(12, 13);
  assert.equal(s.next, 15);
  s.done(20);
  s.reset(18);
  assert.equal(s.next, 18);
  s.done(18);
  s.done(19);
  assert.equal(s.next, 21);
});

test('daily session windows in UTC, including one across midnight', () => {
  const at = (iso: string) => Date.parse(iso);
  assert.deepEqual(sessionWindow(at('2026-11-24T10:00:00Z'), null, null), { open: true, opened: 0, closes: Number.POSITIVE_INFINITY });
  assert.deepEqual(sessionWindow(at('2026-11-24T10:00:00Z'), '08:30:00', '15:00:00'), {
    open: true,
    opened: at('2026-11-24T08:30:00Z'),
    closes: at('2026-11-24T15:00:00Z'),
  });
  assert.deepEqual(sessionWindow(at('2026-11-24T15:00:00Z'), '08:30:00', '15:00:00'), { open: false, opens: at('2026-11-25T08:30:00Z') });
  assert.deepEqual(sessionWindow(at('2026-11-24T07:00:00Z'), '08:30:00', '15:00:00'), { open: false, opens: at('2026-11-24T08:30:00Z') });
  assert.deepEqual(sessionWindow(at('2026-11-24T23:00:00Z'), '22:00:00', '06:00:00'), {
    open: true,
    opened: at('2026-11-24T22:00:00Z'),
    closes: at('2026-11-25T06:00:00Z'),
  });
  assert.deepEqual(sessionWindow(at('2026-11-25T05:59:59Z'), '22:00:00', '06:00:00'), {
    open: true,
    opened: at('2026-11-24T22:00:00Z'),
    closes: at('2026-11-25T06:00:00Z'),
  });
  assert.deepEqual(sessionWindow(at('2026-11-25T12:00:00Z'), '22:00:00', '06:00:00'), { open: false, opens: at('2026-11-25T22:00:00Z') });
});

test('reconnection backs off from 1 s to 30 s with jitter', () => {
  assert.equal(
    reconnectDelayMs(1, () => 0.5),
    1000,
  );
  assert.equal(
    reconnectDelayMs(3, () => 0.5),
    4000,
  );
  assert.equal(
    reconnectDelayMs(20, () => 0.5),
    30_000,
  );
  assert.equal(
    reconnectDelayMs(20, () => 0),
    24_000,
  );
  assert.equal(
    reconnectDelayMs(20, () => 1),
    36_000,
  );
});

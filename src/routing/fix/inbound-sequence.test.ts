import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InboundSequence } from './inbound-sequence.js';
import { sessionWindow } from './session-window.js';
import { reconnectDelayMs } from './session-runner.js';

test('the committed sequence number advances only over messages dealt with, never past a gap', () => {
  const s = new InboundSequence<string>(5);
  assert.deepEqual(s.receive(5, null), []);
  assert.equal(s.next, 6);
  // 7 and 8 arrive before 6 (6 is owed): held, and the number to commit stays 6.
  assert.deepEqual(s.receive(7, 'trade'), []);
  assert.deepEqual(s.receive(8, 'canceled'), []);
  assert.equal(s.next, 6);
  assert.deepEqual(s.openGap(), { begin: 6, end: 6 });
  assert.equal(s.held, 2);
  // 6 comes (the resend): it and the held messages are due, in sequence order.
  assert.deepEqual(s.receive(6, 'new'), ['new', 'trade', 'canceled']);
  assert.equal(s.next, 9);
  assert.equal(s.openGap(), null);
  // A copy of a message dealt with is handed out again (the application recognises it); a number
  // dealt with changes nothing.
  assert.deepEqual(s.receive(7, 'trade again'), ['trade again']);
  assert.deepEqual(s.receive(3, null), []);
  assert.equal(s.next, 9);
});

test('a held message waits for every number before it; a second copy of it is dropped', () => {
  const s = new InboundSequence<string>(1);
  assert.deepEqual(s.receive(4, 'd'), []);
  assert.deepEqual(s.receive(4, 'd copy'), []);
  assert.deepEqual(s.receive(2, 'b'), []);
  assert.deepEqual(s.openGap(), { begin: 1, end: 1 });
  assert.deepEqual(s.receive(1, 'a'), ['a', 'b']);
  assert.deepEqual(s.openGap(), { begin: 3, end: 3 });
  assert.deepEqual(s.receive(3, null), ['d']);
  assert.equal(s.next, 5);
  assert.equal(s.held, 0);
});

test('a gap fill covers the numbers it names and lets held messages through; a reset starts from its new number', () => {
  const s = new InboundSequence<string>(10);
  assert.deepEqual(s.receive(14, 'trade'), []);
  assert.deepEqual(s.gapFill(10, 14), ['trade']);
  assert.equal(s.next, 15);
  assert.deepEqual(s.gapFill(12, 13), []);
  assert.equal(s.next, 15);
  assert.deepEqual(s.receive(17, 'late'), []);
  assert.deepEqual(s.receive(20, 'later'), []);
  // A reset: what was held below the new number was received all the same, and is applied in order.
  assert.deepEqual(s.reset(18), ['late']);
  assert.equal(s.next, 18);
  assert.deepEqual(s.receive(18, null), []);
  assert.deepEqual(s.receive(19, 'x'), ['x', 'later']);
  assert.equal(s.next, 21);
});

test('session messages numbered past a gap leave it open until it is filled, though nothing is held', () => {
  // A Logon (10) and a Heartbeat (11) after 7, 8 and 9 were lost: nothing waits, but 7 to 9 are owed.
  const s = new InboundSequence<string>(7);
  assert.deepEqual(s.receive(10, null), []);
  assert.deepEqual(s.receive(11, null), []);
  assert.equal(s.held, 0);
  assert.deepEqual(s.openGap(), { begin: 7, end: 9 });
  assert.deepEqual(s.receive(7, 'trade'), ['trade']);
  assert.deepEqual(s.openGap(), { begin: 8, end: 9 });
  // A held message nearer than the session messages bounds the gap.
  assert.deepEqual(s.receive(9, 'canceled'), []);
  assert.deepEqual(s.openGap(), { begin: 8, end: 8 });
  assert.deepEqual(s.gapFill(8, 9), ['canceled']);
  assert.equal(s.next, 12);
  assert.equal(s.openGap(), null);
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

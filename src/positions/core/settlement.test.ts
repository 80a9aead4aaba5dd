import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addUnsettled, clocksOf, parseUnsettled, serialiseUnsettled, shiftDate, unsettledQty, type UnsettledEntry } from './settlement.js';

// T+3 weekdays, enough for these cases (the service uses the exchange's calendar).
const t3: Record<string, string> = {
  '2026-11-23': '2026-11-26',
  '2026-11-24': '2026-11-27',
  '2026-11-27': '2026-12-02',
  '2026-10-01': '2026-10-06',
};
const settles = (d: string) => t3[d] ?? assert.fail(`no settlement date for ${d}`);

test('entries add up by clock and trade date, net to zero away, and serialise alike for equal sets', () => {
  let e: UnsettledEntry[] = [];
  e = addUnsettled(e, null, '2026-11-24', 10);
  e = addUnsettled(e, 'clk_b', '2026-11-23', 5);
  e = addUnsettled(e, null, '2026-11-23', 7);
  e = addUnsettled(e, null, '2026-11-24', -4);
  assert.deepEqual(e, [
    [null, '2026-11-23', 7],
    [null, '2026-11-24', 6],
    ['clk_b', '2026-11-23', 5],
  ]);
  e = addUnsettled(e, null, '2026-11-24', -6);
  assert.deepEqual(
    e,
    [
      [null, '2026-11-23', 7],
      ['clk_b', '2026-11-23', 5],
    ],
    'an entry that nets to zero is removed',
  );
  assert.deepEqual(parseUnsettled(serialiseUnsettled(e)), e);
  assert.deepEqual(parseUnsettled(''), []);
  assert.deepEqual(clocksOf(e), ['clk_b']);
});

test('entries more than 31 days before a new fill of the same clock are dropped (settled); other clocks are kept', () => {
  let e: UnsettledEntry[] = [
    [null, '2026-10-01', 3],
    ['clk_a', '2026-10-01', 2],
  ];
  e = addUnsettled(e, null, '2026-11-01', 1);
  assert.deepEqual(
    e,
    [
      [null, '2026-10-01', 3],
      [null, '2026-11-01', 1],
      ['clk_a', '2026-10-01', 2],
    ],
    '31 days: kept',
  );
  e = addUnsettled(e, null, '2026-11-02', 1);
  assert.deepEqual(e, [
    [null, '2026-11-01', 1],
    [null, '2026-11-02', 1],
    ['clk_a', '2026-10-01', 2],
  ]);
  assert.equal(shiftDate('2026-03-01', -1), '2026-02-28');
  assert.equal(shiftDate('2024-03-01', -1), '2024-02-29');
});

test('a fill is unsettled before its settlement date and settled from that date on, on its own clock', () => {
  const e: UnsettledEntry[] = [
    [null, '2026-11-23', 10],
    [null, '2026-11-24', -4],
    ['clk_a', '2026-11-27', 5],
  ];
  const on = (real: string, clock: string) => (c: string | null) => (c === null ? real : clock);
  // Real time, Wednesday 25th: Monday's and Tuesday's trades have not settled yet.
  assert.equal(unsettledQty(e, settles, on('2026-11-25', '2026-11-27')), 10n - 4n + 5n);
  // Thursday 26th: Monday's trade settles that day (its settlement_status is settled); Tuesday's has not.
  assert.equal(unsettledQty(e, settles, on('2026-11-26', '2026-11-27')), -4n + 5n);
  // Friday 27th: both real-time trades settled; the clock's Friday trade waits for its clock.
  assert.equal(unsettledQty(e, settles, on('2026-11-27', '2026-11-27')), 5n);
  assert.equal(unsettledQty(e, settles, on('2026-11-27', '2026-12-01')), 5n);
  assert.equal(unsettledQty(e, settles, on('2026-11-27', '2026-12-02')), 0n);
});

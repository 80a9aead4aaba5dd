import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MarketCalendar, type CalendarYear } from '../../markets/calendar.js';
import { settlementDate, settlementStatus } from './settlement.js';

const phases = [{ name: 'continuous' as const, start: '09:45:00', end: '14:00:00' }];
const year: CalendarYear = {
  exchange: 'BRVM',
  year: 2026,
  source: 'test',
  timetables: { normal: phases, eve: [{ name: 'continuous', start: '09:45:00', end: '11:00:00' }] },
  week: { monday: 'normal', tuesday: 'normal', wednesday: 'normal', thursday: 'normal', friday: 'normal', saturday: null, sunday: null },
  days: [
    { date: '2026-12-24', name: 'Christmas Eve', timetable: 'eve' },
    { date: '2026-12-25', name: 'Christmas Day', timetable: null },
  ],
};
const calendar = new MarketCalendar([year]);

test('T+3 in open days: across a weekend, across a holiday, a shortened day counts', () => {
  assert.equal(settlementDate(calendar, 'BRVM', '2026-11-23', 3), '2026-11-26', 'Monday -> Thursday');
  assert.equal(settlementDate(calendar, 'BRVM', '2026-11-27', 3), '2026-12-02', 'Friday -> Wednesday over the weekend');
  assert.equal(
    settlementDate(calendar, 'BRVM', '2026-12-23', 3),
    '2026-12-29',
    'Wednesday: the eve (24th) counts, Christmas and the weekend do not',
  );
  assert.equal(settlementDate(calendar, 'BRVM', '2026-12-24', 3), '2026-12-30');
  assert.equal(settlementDate(calendar, 'BRVM', '2026-11-28', 3), '2026-12-02', 'a Saturday trade counts from the Monday');
});

test('the status moves on the settlement date, at 00:00 UTC', () => {
  assert.equal(settlementStatus('2026-12-02', '2026-11-27'), 'pending');
  assert.equal(settlementStatus('2026-12-02', '2026-12-01'), 'pending');
  assert.equal(settlementStatus('2026-12-02', '2026-12-02'), 'settled');
  assert.equal(settlementStatus('2026-12-02', '2027-01-15'), 'settled');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WeekdayCalendar } from '../weekday-calendar.js';
import { checkExpireDate, dayStart, expiryInstant, TIME_IN_FORCE } from './lifecycle.js';

const at = (iso: string) => Date.parse(iso);
const days = new WeekdayCalendar();

test('expire_date: required with gtd and only with it, a real date from today to a year ahead', () => {
  const now = at('2026-11-24T18:00:00.000Z');
  const rule = (tif: (typeof TIME_IN_FORCE)[number], date: string | undefined) => checkExpireDate(tif, date, now)?.rule ?? 'ok';
  assert.equal(rule('gtd', '2026-11-24'), 'ok', 'today, even after the close');
  assert.equal(rule('gtd', '2027-11-24'), 'ok', 'a year ahead, the last day');
  assert.equal(rule('gtd', '2027-11-25'), 'expire_date');
  assert.equal(rule('gtd', '2026-11-23'), 'expire_date', 'yesterday');
  assert.equal(rule('gtd', undefined), 'expire_date', 'missing');
  for (const bad of ['2026-11-31', '2026-02-29', '26-11-30', '2026-11-30T00:00:00Z', '', 'tomorrow']) assert.equal(rule('gtd', bad), 'expire_date', bad);
  for (const tif of ['day', 'gtc', 'ioc', 'fok'] as const) {
    assert.equal(rule(tif, undefined), 'ok', tif);
    assert.equal(rule(tif, '2026-12-01'), 'expire_date', `${tif} with a date`);
  }
  const detail = checkExpireDate('gtd', '2026-01-01', now);
  assert.deepEqual([detail?.field, detail?.value], ['expire_date', '2026-01-01']);
  // A leap day a year ahead of 29 February runs to 1 March.
  assert.equal(checkExpireDate('gtd', '2029-03-01', at('2028-02-29T10:00:00Z')), null);
  assert.equal(checkExpireDate('gtd', '2029-03-02', at('2028-02-29T10:00:00Z'))?.rule, 'expire_date');
  assert.ok(Number.isNaN(dayStart('2026-13-01')));
});

test('day orders expire at the close of the session they wait for', () => {
  const close = (iso: string) => new Date(expiryInstant(days, 'BRVM', 'day', null, at(iso)) ?? 0).toISOString();
  assert.equal(close('2026-11-23T09:30:00.000Z'), '2026-11-23T15:00:00.000Z', 'a Monday before the open');
  assert.equal(close('2026-11-23T14:59:59.999Z'), '2026-11-23T15:00:00.000Z');
  assert.equal(close('2026-11-23T15:00:00.000Z'), '2026-11-24T15:00:00.000Z', 'at the close: the next session');
  assert.equal(close('2026-11-27T16:00:00.000Z'), '2026-11-30T15:00:00.000Z', 'Friday evening: Monday');
  assert.equal(close('2026-11-28T10:00:00.000Z'), '2026-11-30T15:00:00.000Z', 'Saturday: Monday');
});

test('gtd orders expire at the close of expire_date, or its end when the exchange is closed; the others never', () => {
  const created = at('2026-11-24T10:00:00.000Z');
  assert.equal(expiryInstant(days, 'GSE', 'gtd', '2026-12-04', created), at('2026-12-04T15:00:00.000Z'));
  assert.equal(expiryInstant(days, 'GSE', 'gtd', '2026-12-05', created), at('2026-12-06T00:00:00.000Z'), 'a Saturday');
  for (const tif of ['gtc', 'ioc', 'fok'] as const) assert.equal(expiryInstant(days, 'BRVM', tif, null, created), null);
});

test('the interim calendar: Monday to Friday, close 15:00 UTC, open days counted forward', () => {
  assert.equal(days.closeOf('BRVM', '2026-11-27'), at('2026-11-27T15:00:00.000Z'));
  assert.equal(days.closeOf('BVMAC', '2026-11-28'), null);
  assert.equal(days.closeOf('GSE', '2026-11-29'), null);
  assert.equal(days.addOpenDays('BRVM', '2026-11-23', 3), '2026-11-26', 'Monday T+3: Thursday');
  assert.equal(days.addOpenDays('BRVM', '2026-11-27', 3), '2026-12-02', 'Friday T+3: Wednesday');
  assert.equal(days.addOpenDays('BRVM', '2026-11-28', 1), '2026-11-30', 'from a Saturday');
  assert.equal(days.addOpenDays('BRVM', '2026-12-31', 1), '2027-01-01', 'no holidays yet');
  assert.throws(() => days.addOpenDays('BRVM', '2026-11-23', 0), RangeError);
  assert.throws(() => days.closeOf('BRVM', '23/11/2026'), RangeError);
});

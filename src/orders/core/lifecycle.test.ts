import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calendarYears, type CalendarEntry } from '../../markets/calendar-file.js';
import { MarketCalendar } from '../../markets/calendar.js';
import { readShippedCalendars } from '../../markets/shipped-calendars.js';
import { checkExpireDate, dayStart, expiryInstant, type TIME_IN_FORCE } from './lifecycle.js';
import type { TradingDays } from './trading-days.js';

const at = (iso: string) => Date.parse(iso);
/** The calendars the repository ships (holidays and eves included), as the service reads them. */
const days: TradingDays = new MarketCalendar(readShippedCalendars().flatMap(({ content }) => calendarYears(content as CalendarEntry)));

test('expire_date: required with gtd and only with it, a real date from today to a year ahead', () => {
  const now = at('2026-11-24T18:00:00.000Z');
  const rule = (tif: (typeof TIME_IN_FORCE)[number], date: string | undefined) => checkExpireDate(tif, date, now)?.rule ?? 'ok';
  assert.equal(rule('gtd', '2026-11-24'), 'ok', 'today, even after the close');
  assert.equal(rule('gtd', '2027-11-24'), 'ok', 'a year ahead, the last day');
  assert.equal(rule('gtd', '2027-11-25'), 'expire_date');
  assert.equal(rule('gtd', '2026-11-23'), 'expire_date', 'yesterday');
  assert.equal(rule('gtd', undefined), 'expire_date', 'missing');
  for (const bad of ['2026-11-31', '2026-02-29', '26-11-30', '2026-11-30T00:00:00Z', '', 'tomorrow'])
    assert.equal(rule('gtd', bad), 'expire_date', bad);
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

test("a day order placed on the eve of a holiday expires at the eve's early close; after it, at the next open day's", () => {
  const close = (iso: string) => new Date(expiryInstant(days, 'BRVM', 'day', null, at(iso)) ?? 0).toISOString();
  // Thursday 24 December 2026: the BRVM closes at 12:00 UTC; Friday 25 is Christmas, then a weekend.
  assert.equal(close('2026-12-24T10:00:00.000Z'), '2026-12-24T12:00:00.000Z');
  assert.equal(close('2026-12-24T12:30:00.000Z'), '2026-12-28T15:00:00.000Z', 'after the early close: Monday 28');
  assert.equal(close('2026-12-25T10:00:00.000Z'), '2026-12-28T15:00:00.000Z', 'on the holiday itself');
  // Each exchange closes at its own time: the BVMAC at 12:30 UTC.
  assert.equal(
    new Date(expiryInstant(days, 'BVMAC', 'day', null, at('2026-11-23T09:30:00.000Z')) ?? 0).toISOString(),
    '2026-11-23T12:30:00.000Z',
  );
});

test('gtd orders expire at the close of expire_date, or its end when the exchange is closed; the others never', () => {
  const created = at('2026-11-24T10:00:00.000Z');
  assert.equal(expiryInstant(days, 'GSE', 'gtd', '2026-12-03', created), at('2026-12-03T15:00:00.000Z'));
  assert.equal(expiryInstant(days, 'GSE', 'gtd', '2026-12-04', created), at('2026-12-05T00:00:00.000Z'), "Farmers' Day, a GSE holiday");
  assert.equal(expiryInstant(days, 'GSE', 'gtd', '2026-12-05', created), at('2026-12-06T00:00:00.000Z'), 'a Saturday');
  assert.equal(
    expiryInstant(days, 'BRVM', 'gtd', '2026-12-31', created),
    at('2026-12-31T12:00:00.000Z'),
    "New Year's Eve: the early close",
  );
  for (const tif of ['gtc', 'ioc', 'fok'] as const) assert.equal(expiryInstant(days, 'BRVM', tif, null, created), null);
});

test("the exchanges' calendars: closes per day, open days counted forward past weekends and holidays", () => {
  assert.equal(days.closeOf('BRVM', '2026-11-27'), at('2026-11-27T15:00:00.000Z'));
  assert.equal(days.closeOf('BRVM', '2026-12-24'), at('2026-12-24T12:00:00.000Z'), 'an eve');
  assert.equal(days.closeOf('BRVM', '2026-12-25'), null, 'a holiday');
  assert.equal(days.closeOf('BVMAC', '2026-11-28'), null);
  assert.equal(days.closeOf('GSE', '2026-11-29'), null);
  assert.equal(days.addOpenDays('BRVM', '2026-11-23', 3), '2026-11-26', 'Monday T+3: Thursday');
  assert.equal(days.addOpenDays('BRVM', '2026-11-27', 3), '2026-12-02', 'Friday T+3: Wednesday');
  assert.equal(days.addOpenDays('BRVM', '2026-11-28', 1), '2026-11-30', 'from a Saturday');
  assert.equal(days.addOpenDays('BRVM', '2026-12-23', 3), '2026-12-29', 'the eve counts, Christmas and the weekend do not');
  assert.equal(days.addOpenDays('GSE', '2026-12-03', 3), '2026-12-09', "Farmers' Day skipped");
  assert.equal(days.addOpenDays('BRVM', '2026-12-31', 1), '2027-01-04', "New Year's Day skipped");
  assert.equal(days.addOpenDays('BRVM', '2026-11-23', 0), '2026-11-23');
  assert.throws(() => days.addOpenDays('BRVM', '2026-11-23', -1), RangeError);
  assert.throws(() => days.closeOf('BRVM', '23/11/2026'), RangeError);
});

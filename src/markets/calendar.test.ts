import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MarketCalendar, type CalendarYear, type PhaseTime } from './calendar.js';
import { calendarYears, type CalendarEntry } from './calendar-file.js';
import { readShippedCalendars } from './shipped-calendars.js';

/** The calendars the repository ships: the tests read real data, as the service does. */
const shipped = new MarketCalendar(readShippedCalendars().flatMap(({ content }) => calendarYears(content as CalendarEntry)));
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('BRVM phases, to the second', () => {
  // Wednesday 25 November 2026, an ordinary day.
  const cases: [string, string][] = [
    ['00:00:00', 'closed'],
    ['08:59:59', 'closed'],
    ['09:00:00', 'pre_open'],
    ['09:44:59', 'pre_open'],
    ['09:45:00', 'continuous'],
    ['13:59:59', 'continuous'],
    ['14:00:00', 'pre_close'],
    ['14:29:59', 'pre_close'],
    ['14:30:00', 'trading_at_last'],
    ['14:59:59', 'trading_at_last'],
    ['15:00:00', 'closed'],
    ['23:59:59', 'closed'],
  ];
  for (const [time, phase] of cases) {
    test(`${time} is ${phase}`, () => assert.equal(shipped.phaseAt('BRVM', at(`2026-11-25T${time}Z`)), phase));
  }

  test('the last millisecond of a phase still belongs to it; an instant auction is never reported', () => {
    assert.equal(shipped.phaseAt('BRVM', at('2026-11-25T14:59:59.999Z')), 'trading_at_last');
    assert.equal(shipped.phaseAt('BRVM', at('2026-11-25T09:44:59.999Z')), 'pre_open');
    for (let s = at('2026-11-25T08:00:00Z'); s < at('2026-11-25T16:00:00Z'); s += 1000) {
      assert.ok(!['opening_auction', 'closing_auction'].includes(shipped.phaseAt('BRVM', s)), new Date(s).toISOString());
    }
  });

  test('the day lists every phase, auctions as instants', () => {
    assert.deepEqual(shipped.day('BRVM', '2026-11-25'), {
      date: '2026-11-25',
      open: true,
      phases: [
        { name: 'pre_open', start: '2026-11-25T09:00:00Z', end: '2026-11-25T09:45:00Z' },
        { name: 'opening_auction', start: '2026-11-25T09:45:00Z', end: '2026-11-25T09:45:00Z' },
        { name: 'continuous', start: '2026-11-25T09:45:00Z', end: '2026-11-25T14:00:00Z' },
        { name: 'pre_close', start: '2026-11-25T14:00:00Z', end: '2026-11-25T14:30:00Z' },
        { name: 'closing_auction', start: '2026-11-25T14:30:00Z', end: '2026-11-25T14:30:00Z' },
        { name: 'trading_at_last', start: '2026-11-25T14:30:00Z', end: '2026-11-25T15:00:00Z' },
      ],
    });
    assert.equal(iso(shipped.closeOf('BRVM', '2026-11-25')), '2026-11-25T15:00:00.000Z');
  });
});

describe('weekends, holidays and eves', () => {
  test('a weekend is closed all day', () => {
    for (const date of ['2026-11-28', '2026-11-29']) {
      assert.equal(shipped.isOpenDay('BRVM', date), false);
      assert.deepEqual(shipped.day('BRVM', date), { date, open: false, phases: [] });
      assert.equal(shipped.closeOf('BRVM', date), null);
      assert.equal(shipped.phaseAt('BRVM', at(`${date}T10:00:00Z`)), 'closed');
    }
  });

  test('holidays are closed; each exchange has its own', () => {
    assert.equal(shipped.isOpenDay('BRVM', '2026-12-25'), false);
    assert.equal(shipped.isOpenDay('BRVM', '2026-08-07'), false, "Côte d'Ivoire's independence day");
    assert.equal(shipped.isOpenDay('GSE', '2026-08-07'), true);
    assert.equal(shipped.isOpenDay('GSE', '2026-07-01'), false, "Ghana's Republic Day");
    assert.equal(shipped.isOpenDay('BRVM', '2026-04-03'), true, 'Good Friday is not a holiday in Abidjan');
    assert.equal(shipped.isOpenDay('GSE', '2026-04-03'), false);
    assert.equal(shipped.isOpenDay('BVMAC', '2026-05-20'), false, "Cameroon's National Day");
    assert.equal(shipped.isOpenDay('GSE', '2026-12-28'), false, 'Boxing Day on a Saturday is observed on the Monday');
  });

  test('an eve closes at 12:00 with its own phases', () => {
    const eve = shipped.day('BRVM', '2026-12-24');
    assert.equal(eve.open, true);
    assert.deepEqual(
      eve.phases.map((p) => `${p.name} ${p.start.slice(11, 19)}-${p.end.slice(11, 19)}`),
      [
        'pre_open 09:00:00-09:30:00',
        'opening_auction 09:30:00-09:30:00',
        'continuous 09:30:00-11:00:00',
        'pre_close 11:00:00-11:30:00',
        'closing_auction 11:30:00-11:30:00',
        'trading_at_last 11:30:00-12:00:00',
      ],
    );
    assert.equal(iso(shipped.closeOf('BRVM', '2026-12-24')), '2026-12-24T12:00:00.000Z');
    assert.equal(shipped.phaseAt('BRVM', at('2026-12-24T09:30:00Z')), 'continuous');
    assert.equal(shipped.phaseAt('BRVM', at('2026-12-24T11:59:59Z')), 'trading_at_last');
    assert.equal(shipped.phaseAt('BRVM', at('2026-12-24T12:00:00Z')), 'closed');
    assert.equal(shipped.phaseAt('BRVM', at('2026-12-24T14:00:00Z')), 'closed');
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-12-24T10:00:00Z'))), '2026-12-24T12:00:00.000Z');
  });
});

describe('next open and next close', () => {
  test('while open: the close of this session, the open of the next', () => {
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-11-25T10:00:00Z'))), '2026-11-25T15:00:00.000Z');
    assert.equal(iso(shipped.nextOpen('BRVM', at('2026-11-25T10:00:00Z'))), '2026-11-26T09:00:00.000Z');
  });

  test('strictly after the instant: at 09:00:00 the next open is tomorrow, at 15:00:00 the next close is too', () => {
    assert.equal(iso(shipped.nextOpen('BRVM', at('2026-11-25T09:00:00Z'))), '2026-11-26T09:00:00.000Z');
    assert.equal(iso(shipped.nextOpen('BRVM', at('2026-11-25T08:59:59Z'))), '2026-11-25T09:00:00.000Z');
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-11-25T14:59:59Z'))), '2026-11-25T15:00:00.000Z');
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-11-25T15:00:00Z'))), '2026-11-26T15:00:00.000Z');
  });

  test('over a weekend and over the new year', () => {
    assert.equal(iso(shipped.nextOpen('BRVM', at('2026-11-27T15:00:00Z'))), '2026-11-30T09:00:00.000Z');
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-11-28T12:00:00Z'))), '2026-11-30T15:00:00.000Z');
    // New Year's Eve closes at noon, 1 January 2027 is a Friday holiday, then the weekend.
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-12-31T11:00:00Z'))), '2026-12-31T12:00:00.000Z');
    assert.equal(iso(shipped.nextOpen('BRVM', at('2026-12-31T12:00:00Z'))), '2027-01-04T09:00:00.000Z');
    assert.equal(iso(shipped.nextClose('BRVM', at('2026-12-31T12:00:00Z'))), '2027-01-04T15:00:00.000Z');
  });
});

describe('open-day arithmetic', () => {
  test('settlement dates skip weekends and holidays', () => {
    assert.equal(shipped.addOpenDays('BRVM', '2026-11-25', 3), '2026-11-30', 'Wednesday + 3 is Monday');
    assert.equal(shipped.addOpenDays('BRVM', '2026-11-27', 1), '2026-11-30');
    assert.equal(shipped.addOpenDays('BRVM', '2026-12-24', 3), '2026-12-30', 'Christmas and a weekend skipped');
    assert.equal(shipped.addOpenDays('BRVM', '2026-12-30', 3), '2027-01-05', 'across the year: 31 Dec, 4 Jan, 5 Jan');
    assert.equal(shipped.addOpenDays('GSE', '2026-04-02', 1), '2026-04-07', 'Good Friday and Easter Monday in Accra');
    assert.equal(shipped.addOpenDays('BRVM', '2026-04-02', 1), '2026-04-03');
    assert.equal(shipped.addOpenDays('BRVM', '2026-12-24', 1), '2026-12-28', 'a half day counts as an open day, the holiday does not');
  });

  test('zero days is the date itself; a negative or fractional count is refused', () => {
    assert.equal(shipped.addOpenDays('BRVM', '2026-11-28', 0), '2026-11-28');
    assert.throws(() => shipped.addOpenDays('BRVM', '2026-11-25', -1), RangeError);
    assert.throws(() => shipped.addOpenDays('BRVM', '2026-11-25', 1.5), RangeError);
    assert.throws(() => shipped.addOpenDays('BRVM', '2026-02-30', 1), RangeError);
    assert.throws(() => shipped.day('BRVM', '25/11/2026'), RangeError);
  });
});

const P = (name: PhaseTime['name'], start: string, end = start): PhaseTime => ({ name, start, end });
const WEEKDAYS_ONLY = (t: string | null) => ({ monday: t, tuesday: t, wednesday: t, thursday: t, friday: t, saturday: null, sunday: null });

function year(overrides: Partial<CalendarYear>): CalendarYear {
  return { exchange: 'BRVM', year: 2026, source: 'test', timetables: {}, week: WEEKDAYS_ONLY(null), days: [], ...overrides };
}

describe('calendars built from other data', () => {
  test('a year outside the data follows the nearest covered year, without its holidays', () => {
    assert.equal(shipped.covers('BRVM', 2027), true);
    assert.equal(shipped.covers('BRVM', 2028), false);
    assert.equal(shipped.isOpenDay('BRVM', '2028-12-25'), true, 'no holiday is known for 2028');
    assert.equal(shipped.isOpenDay('BRVM', '2028-12-23'), false, 'Saturday');
    assert.equal(iso(shipped.closeOf('BRVM', '2028-12-25')), '2028-12-25T15:00:00.000Z');
    assert.equal(shipped.isOpenDay('BRVM', '2025-12-25'), true, 'before the data: the earliest year');
    assert.equal(shipped.addOpenDays('BRVM', '2027-12-30', 2), '2028-01-03');
  });

  test('an exchange without data is always closed', () => {
    const calendar = new MarketCalendar([]);
    assert.equal(calendar.phaseAt('GSE', at('2026-11-25T10:00:00Z')), 'closed');
    assert.equal(calendar.nextOpen('GSE', at('2026-11-25T10:00:00Z')), null);
    assert.equal(calendar.nextClose('GSE', at('2026-11-25T10:00:00Z')), null);
    assert.throws(() => calendar.addOpenDays('GSE', '2026-11-25', 1), /no open day/);
  });

  test('a break between phases is closed, and sessions end and start around it', () => {
    const calendar = new MarketCalendar([
      year({
        timetables: {
          split: [
            P('pre_open', '08:00:00', '09:00:00'),
            P('continuous', '09:00:00', '11:00:00'),
            P('trading_at_last', '12:00:00', '13:00:00'),
          ],
        },
        week: WEEKDAYS_ONLY('split'),
      }),
    ]);
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T10:59:59Z')), 'continuous');
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T11:30:00Z')), 'closed');
    assert.equal(calendar.isOpen('BRVM', at('2026-11-25T11:30:00Z')), false);
    assert.equal(
      iso(calendar.nextClose('BRVM', at('2026-11-25T08:30:00Z'))),
      '2026-11-25T11:00:00.000Z',
      'pre-open and continuous make one session',
    );
    assert.equal(iso(calendar.nextOpen('BRVM', at('2026-11-25T11:30:00Z'))), '2026-11-25T12:00:00.000Z');
    assert.equal(iso(calendar.closeOf('BRVM', '2026-11-25')), '2026-11-25T13:00:00.000Z');
  });

  test('an auction given as a window is reported during it', () => {
    const calendar = new MarketCalendar([
      year({
        timetables: {
          call: [
            P('pre_open', '09:00:00', '09:40:00'),
            P('opening_auction', '09:40:00', '09:45:00'),
            P('continuous', '09:45:00', '15:00:00'),
          ],
        },
        week: WEEKDAYS_ONLY('call'),
      }),
    ]);
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T09:39:59Z')), 'pre_open');
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T09:40:00Z')), 'opening_auction');
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T09:44:59Z')), 'opening_auction');
    assert.equal(calendar.phaseAt('BRVM', at('2026-11-25T09:45:00Z')), 'continuous');
  });

  test('a special day may open a weekend on its own timetable', () => {
    const calendar = new MarketCalendar([
      year({
        timetables: { normal: [P('continuous', '10:00:00', '15:00:00')], short: [P('continuous', '10:00:00', '12:00:00')] },
        week: WEEKDAYS_ONLY('normal'),
        days: [{ date: '2026-11-28', name: 'Exceptional Saturday session', timetable: 'short' }],
      }),
    ]);
    assert.equal(calendar.isOpenDay('BRVM', '2026-11-28'), true);
    assert.equal(iso(calendar.nextOpen('BRVM', at('2026-11-27T16:00:00Z'))), '2026-11-28T10:00:00.000Z');
    assert.equal(calendar.addOpenDays('BRVM', '2026-11-27', 1), '2026-11-28');
  });
});

describe('GSE and BVMAC timetables', () => {
  test('GSE: pre-open from 09:30, continuous 10:00 to 15:00', () => {
    const expected: [string, string][] = [
      ['09:29:59', 'closed'],
      ['09:30:00', 'pre_open'],
      ['10:00:00', 'continuous'],
      ['14:59:59', 'continuous'],
      ['15:00:00', 'closed'],
    ];
    for (const [time, phase] of expected) assert.equal(shipped.phaseAt('GSE', at(`2026-11-25T${time}Z`)), phase, time);
  });

  test('BVMAC closes after its closing auction at 12:30 UTC', () => {
    assert.equal(shipped.phaseAt('BVMAC', at('2026-11-25T12:29:59Z')), 'pre_close');
    assert.equal(shipped.phaseAt('BVMAC', at('2026-11-25T12:30:00Z')), 'closed');
    assert.equal(iso(shipped.closeOf('BVMAC', '2026-11-25')), '2026-11-25T12:30:00.000Z');
  });
});

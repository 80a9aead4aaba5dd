import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calendarYears, validateCalendarEntry, type CalendarEntry } from './calendar-file.js';
import { readShippedCalendars } from './shipped-calendars.js';

const VALID: CalendarEntry = {
  exchange: 'BRVM',
  years: [2026],
  source: 'test data',
  timetables: {
    normal: [
      { name: 'pre_open', start: '09:00:00', end: '09:45:00' },
      { name: 'opening_auction', start: '09:45:00', end: '09:45:00' },
      { name: 'continuous', start: '09:45:00', end: '15:00:00' },
    ],
  },
  week: { monday: 'normal', tuesday: 'normal', wednesday: 'normal', thursday: 'normal', friday: 'normal', saturday: null, sunday: null },
  days: [{ date: '2026-12-25', name: 'Christmas Day' }],
};

/** The entry with `change` applied to a copy. */
function variant(change: (e: any) => void): unknown {
  const copy = structuredClone(VALID) as any;
  change(copy);
  return copy;
}

/** field, rule and value of each detail, without the human message. */
const problems = (value: unknown) => validateCalendarEntry(value).map((d) => [d.field, d.rule, d.value]);

test('the shipped calendars are valid, name their source and cover two whole years of each exchange', () => {
  const files = readShippedCalendars();
  assert.deepEqual(
    files.map((f) => f.file),
    ['BRVM.json', 'BVMAC.json', 'GSE.json'],
  );
  for (const { file, content } of files) {
    assert.deepEqual(validateCalendarEntry(content), [], file);
    const entry = content as CalendarEntry;
    assert.deepEqual(entry.years, [2026, 2027], file);
    assert.match(entry.source, /Holidays:/, file);
    assert.ok(
      entry.days.some((d) => d.provisional === true),
      `${file}: Islamic holidays are marked provisional`,
    );
  }
});

test('a valid entry has no problem, and splits into its years with their own days', () => {
  assert.deepEqual(validateCalendarEntry(VALID), []);
  const two = variant((e) => {
    e.years = [2027, 2026];
    e.days.push({ date: '2027-01-01', name: "New Year's Day", provisional: false });
  }) as CalendarEntry;
  assert.deepEqual(
    calendarYears(two).map((y) => [y.year, y.days]),
    [
      [2026, [{ date: '2026-12-25', name: 'Christmas Day', timetable: null }]],
      [2027, [{ date: '2027-01-01', name: "New Year's Day", timetable: null }]],
    ],
  );
});

test('schema problems name the member at fault', () => {
  assert.deepEqual(problems(variant((e) => (e.exchange = 'NYSE'))), [['exchange', 'enum', 'NYSE']]);
  assert.deepEqual(problems(variant((e) => (e.days[0].date = '2026-02-30'))), [['days.0.date', 'format', '2026-02-30']]);
  assert.deepEqual(problems(variant((e) => (e.timetables.normal[0].start = '9:00'))), [['timetables.normal.0.start', 'pattern', '9:00']]);
  assert.deepEqual(problems(variant((e) => (e.timetables.normal[2].name = 'lunch'))), [['timetables.normal.2.name', 'enum', 'lunch']]);
  assert.deepEqual(problems(variant((e) => delete e.week.sunday)), [['week.sunday', 'required', null]]);
  assert.deepEqual(problems(variant((e) => (e.days[0].closes = '12:00:00'))), [['days.0.closes', 'additionalProperties', '12:00:00']]);
  assert.deepEqual(problems(variant((e) => (e.years = []))), [['years', 'minItems', []]]);
  assert.deepEqual(problems([VALID]), [['entry', 'type', [VALID]]]);
});

test('timetables: phases once each, in order, without overlap; only an auction may be an instant', () => {
  const phases = (list: [string, string, string][]) =>
    variant((e) => (e.timetables.normal = list.map(([name, start, end]) => ({ name, start, end }))));
  assert.deepEqual(
    problems(
      phases([
        ['continuous', '09:45:00', '15:00:00'],
        ['pre_open', '09:00:00', '09:45:00'],
      ]),
    ),
    [
      ['timetables.normal.1.name', 'phase_order', 'pre_open'],
      ['timetables.normal.1.start', 'phase_overlap', '09:00:00'],
    ],
  );
  assert.deepEqual(
    problems(
      phases([
        ['pre_open', '09:00:00', '10:00:00'],
        ['continuous', '09:45:00', '15:00:00'],
      ]),
    ),
    [['timetables.normal.1.start', 'phase_overlap', '09:45:00']],
  );
  assert.deepEqual(problems(phases([['continuous', '15:00:00', '09:00:00']])), [
    ['timetables.normal.0.end', 'phase_end', '09:00:00'],
    ['timetables.normal', 'phase_end', 'normal'],
  ]);
  assert.deepEqual(
    problems(
      phases([
        ['pre_close', '14:00:00', '14:00:00'],
        ['closing_auction', '14:30:00', '14:30:00'],
      ]),
    ),
    [
      ['timetables.normal.0.end', 'phase_end', '14:00:00'],
      ['timetables.normal', 'phase_end', 'normal'],
    ],
  );
  assert.deepEqual(
    problems(
      phases([
        ['pre_open', '09:00:00', '09:30:00'],
        ['opening_auction', '09:30:00', '09:35:00'],
        ['continuous', '09:35:00', '15:00:00'],
      ]),
    ),
    [],
  );
});

test('references and dates: known timetables, dates inside the years, each date once', () => {
  assert.deepEqual(problems(variant((e) => (e.week.saturday = 'weekend'))), [['week.saturday', 'timetable', 'weekend']]);
  assert.deepEqual(problems(variant((e) => (e.days[0].timetable = 'half_day'))), [['days.0.timetable', 'timetable', 'half_day']]);
  assert.deepEqual(problems(variant((e) => e.days.push({ date: '2027-01-01', name: 'Next year' }))), [
    ['days.1.date', 'year', '2027-01-01'],
  ]);
  assert.deepEqual(problems(variant((e) => e.days.push({ date: '2026-12-25', name: 'Again' }))), [['days.1.date', 'unique', '2026-12-25']]);
});

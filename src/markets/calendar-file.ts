import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { ErrorDetail } from '../lib/errors.js';
import { compileValidator } from '../lib/validation.js';
import { EXCHANGES } from './exchanges.js';
import { isCalendarDate } from '../lib/dates.js';
import { AUCTION_PHASES, PHASES, WEEKDAYS, secondsOfDay, type CalendarYear } from './calendar.js';

/**
 * The calendar file operators import (`cauri calendars import`) and the repository ships
 * (calendars/*.json): one exchange's timetables, weekly pattern and exceptional days for one or more
 * whole years. Importing an entry replaces those years of that exchange.
 */

const TIME = '^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$';
const TIMETABLE_NAME = '^[a-z][a-z0-9_]{0,31}$';

const PhaseTimeSchema = Type.Object(
  {
    name: StringEnum(PHASES),
    start: Type.String({ pattern: TIME, description: 'HH:MM:SS UTC' }),
    end: Type.String({ pattern: TIME, description: 'HH:MM:SS UTC; equal to start for an auction at an instant' }),
  },
  { additionalProperties: false },
);

const SpecialDaySchema = Type.Object(
  {
    date: Type.String({ format: 'date' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    timetable: Type.Optional(Nullable(Type.String({ pattern: TIMETABLE_NAME }))),
    provisional: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const weekday = () => Nullable(Type.String({ pattern: TIMETABLE_NAME, description: 'a timetable name; null when closed that day' }));
const WeekSchema = Type.Object(
  {
    monday: weekday(),
    tuesday: weekday(),
    wednesday: weekday(),
    thursday: weekday(),
    friday: weekday(),
    saturday: weekday(),
    sunday: weekday(),
  },
  { additionalProperties: false },
);

export const CalendarEntry = Type.Object(
  {
    exchange: StringEnum(EXCHANGES),
    years: Type.Array(Type.Integer({ minimum: 2000, maximum: 2100 }), { minItems: 1, maxItems: 10, uniqueItems: true }),
    source: Type.String({ minLength: 1, maxLength: 4000 }),
    timetables: Type.Record(
      Type.String({ pattern: TIMETABLE_NAME }),
      Type.Array(PhaseTimeSchema, { minItems: 1, maxItems: PHASES.length }),
      {
        minProperties: 1,
        maxProperties: 16,
      },
    ),
    week: WeekSchema,
    days: Type.Array(SpecialDaySchema, { maxItems: 2000 }),
  },
  { additionalProperties: false },
);
export type CalendarEntry = Static<typeof CalendarEntry>;

const validateShape = compileValidator(CalendarEntry, 'entry');

/** The rules the schema cannot say: phase order, references between members, dates inside the years. */
function checkEntry(entry: CalendarEntry): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const [name, phases] of Object.entries(entry.timetables)) {
    let previousEnd = -1;
    let previousRank = -1;
    let lasting = false;
    for (const [i, p] of phases.entries()) {
      const at = `timetables.${name}.${i}`;
      const start = secondsOfDay(p.start);
      const end = secondsOfDay(p.end);
      const rank = PHASES.indexOf(p.name);
      if (rank <= previousRank)
        details.push({
          field: `${at}.name`,
          rule: 'phase_order',
          value: p.name,
          message: `phases are listed once each, in the order ${PHASES.join(', ')}`,
        });
      if (start < previousEnd)
        details.push({ field: `${at}.start`, rule: 'phase_overlap', value: p.start, message: 'starts before the previous phase ends' });
      if (end < start || (end === start && !AUCTION_PHASES.includes(p.name))) {
        details.push({
          field: `${at}.end`,
          rule: 'phase_end',
          value: p.end,
          message: end < start ? 'ends before it starts' : 'only an auction may be an instant (start equal to end)',
        });
      }
      if (end > start) lasting = true;
      previousEnd = Math.max(previousEnd, end);
      previousRank = Math.max(previousRank, rank);
    }
    if (!lasting)
      details.push({
        field: `timetables.${name}`,
        rule: 'phase_end',
        value: name,
        message: 'a timetable needs at least one phase that lasts',
      });
  }
  const known = (name: string | null | undefined) => name === null || name === undefined || name in entry.timetables;
  for (const day of WEEKDAYS) {
    if (!known(entry.week[day]))
      details.push({ field: `week.${day}`, rule: 'timetable', value: entry.week[day], message: 'no timetable of that name in timetables' });
  }
  const seen = new Map<string, number>();
  for (const [i, d] of entry.days.entries()) {
    if (!isCalendarDate(d.date)) continue; // the schema's format check already reported it
    if (!entry.years.includes(Number(d.date.slice(0, 4))))
      details.push({
        field: `days.${i}.date`,
        rule: 'year',
        value: d.date,
        message: `outside the years of the entry (${entry.years.join(', ')})`,
      });
    const earlier = seen.get(d.date);
    if (earlier !== undefined)
      details.push({ field: `days.${i}.date`, rule: 'unique', value: d.date, message: `same date as days.${earlier}` });
    else seen.set(d.date, i);
    if (!known(d.timetable))
      details.push({
        field: `days.${i}.timetable`,
        rule: 'timetable',
        value: d.timetable,
        message: 'no timetable of that name in timetables',
      });
  }
  return details;
}

/** Every problem of one entry (member paths relative to the entry), or none. */
export function validateCalendarEntry(value: unknown): ErrorDetail[] {
  return validateShape(value) ?? checkEntry(value as CalendarEntry);
}

/** A valid entry as the calendar of each of its years, each with that year's days only. */
export function calendarYears(entry: CalendarEntry): CalendarYear[] {
  return [...entry.years]
    .sort((a, b) => a - b)
    .map((year) => ({
      exchange: entry.exchange,
      year,
      source: entry.source,
      timetables: entry.timetables,
      week: entry.week,
      days: entry.days
        .filter((d) => d.date.startsWith(`${year}-`))
        .map((d) => ({
          date: d.date,
          name: d.name,
          timetable: d.timetable ?? null,
          ...(d.provisional === true ? { provisional: true } : {}),
        }))
        .sort((a, b) => (a.date < b.date ? -1 : 1)),
    }));
}

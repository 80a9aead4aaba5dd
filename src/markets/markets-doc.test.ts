import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MarketCalendar } from './calendar.js';
import { calendarBetween, exchangeClock, listExchanges } from './market.service.js';
import { calendarYears, validateCalendarEntry, type CalendarEntry } from './calendar-file.js';
import { readShippedCalendars } from './shipped-calendars.js';

// docs/markets.md is what operators copy from: its example calendar entry must import.
const doc = readFileSync(new URL('../../../docs/markets.md', import.meta.url), 'utf8');

test('the calendar entry of docs/markets.md is valid', () => {
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');
  const entry = blocks.find((b) => b.includes('"timetables"'));
  assert.ok(entry !== undefined, 'the example entry is in the page');
  assert.deepEqual(validateCalendarEntry(JSON.parse(entry)), []);
});

test('the table of the exchanges in docs/markets.md shows what GET /v1/exchanges answers, member for member', () => {
  const section = doc.slice(doc.indexOf('## The exchanges'), doc.indexOf('## Phases'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `') && !line.startsWith('| `code`'))
    .map((line) => {
      const [code, name, jurisdiction, currency, days] = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/^`|`$/g, ''));
      return { code, name, jurisdiction, currency, settlement_days: Number(days) };
    });
  assert.deepEqual(rows, listExchanges());
});

/** The calendars the repository ships, as a fresh deployment serves them. */
const shipped = new MarketCalendar(readShippedCalendars().flatMap(({ content }) => calendarYears(content as CalendarEntry)));
const jsonBlock = (member: string): Record<string, unknown> => {
  const block = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '').find((b) => b.includes(member));
  assert.ok(block !== undefined, `the example with ${member} is in the page`);
  return JSON.parse(block) as Record<string, unknown>;
};

test('the calendar and clock examples of docs/markets.md are what the shipped calendars answer', () => {
  const calendar = jsonBlock('"phases"') as { data: { date: string }[] };
  const days = calendar.data.map((d) => d.date);
  assert.deepEqual(calendarBetween(shipped, 'BRVM', { from: days[0], to: days.at(-1) }, '2026-01-01'), calendar.data);
  const clock = jsonBlock('"next_close"') as { exchange: string; timestamp: string };
  assert.deepEqual(exchangeClock(shipped, 'BRVM', Date.parse(clock.timestamp)), clock);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateCalendarEntry } from './calendar-file.js';

// docs/markets.md is what operators copy from: its example calendar entry must import.
const doc = readFileSync(new URL('../../../docs/markets.md', import.meta.url), 'utf8');

test('the calendar entry of docs/markets.md is valid', () => {
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');
  const entry = blocks.find((b) => b.includes('"timetables"'));
  assert.ok(entry !== undefined, 'the example entry is in the page');
  assert.deepEqual(validateCalendarEntry(JSON.parse(entry)), []);
});

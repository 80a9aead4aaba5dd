import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateCalendarEntry } from './calendar-file.js';
import { listExchanges } from './market.service.js';

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

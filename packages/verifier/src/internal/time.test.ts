import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDate, parseDateTime, parseInstant } from './time.js';

test('date-times in whole seconds: every valid instant, as Date.parse reads it', () => {
  for (let i = 0; i < 5000; i++) {
    // Instants from 1970 to 2200, at whole seconds.
    const ms = Math.floor(Math.random() * 7_258_118_400) * 1000;
    const text = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    assert.equal(parseDateTime(text, true), Date.parse(text), text);
    assert.equal(parseDateTime(text, false), Date.parse(text), text);
  }
  for (const text of ['2024-02-29T23:59:59Z', '2000-02-29T00:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
    assert.equal(parseDateTime(text, true), Date.parse(text), text);
  }
});

test('anything else in whole seconds is refused, whatever Date.parse would make of it', () => {
  for (const text of [
    '2023-02-29T00:00:00Z', // not a leap year
    '1900-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-00T00:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:00:60Z',
    '2026-11-22 10:00:00Z',
    '2026-11-22T10:00:00z',
    '2026-11-22T10:00:00+00:00',
    '\uff12026-11-22T10:00:00Z', // a fullwidth digit
    '2026-1a-22T10:00:00Z',
    '-026-11-22T10:00:00Z',
    '2026-11-22T10:00:00.5Z',
    '2026-11-22T10:00:0Z',
    '2026-11-22T10:00:000',
    '',
  ]) {
    assert.equal(parseDateTime(text, true), null, JSON.stringify(text));
  }
  for (const value of [undefined, null, 1_795_348_260_000, new Date()]) assert.equal(parseDateTime(value, true), null);
});

test('fractions are accepted only where allowed, truncated to milliseconds', () => {
  assert.equal(parseDateTime('2026-11-22T10:00:00.5Z', false), Date.parse('2026-11-22T10:00:00.500Z'));
  assert.equal(parseDateTime('2026-11-22T10:00:00.123456789Z', false), Date.parse('2026-11-22T10:00:00.123Z'));
  assert.equal(parseDateTime('2026-11-22T10:00:00.Z', false), null);
  assert.equal(parseDateTime('2026-02-30T10:00:00.1Z', false), null);
  assert.equal(parseDate('2026-11-22'), Date.parse('2026-11-22T00:00:00Z'));
  assert.equal(parseDate('2026-02-30'), null);
});

test('an instant given by a person: RFC 3339 with Z or an offset, calendar-checked, never in a local zone', () => {
  assert.equal(parseInstant('2026-04-01T12:00:00Z'), Date.parse('2026-04-01T12:00:00Z'));
  assert.equal(parseInstant('2026-04-01T12:00:00.25Z'), Date.parse('2026-04-01T12:00:00.250Z'));
  assert.equal(parseInstant('2026-04-01T14:00:00+02:00'), Date.parse('2026-04-01T12:00:00Z'));
  assert.equal(parseInstant('2026-04-01T07:30:00-04:30'), Date.parse('2026-04-01T12:00:00Z'));
  for (const text of [
    '2026-04-01T12:00:00', // no offset: Date would read it in the local zone
    '2026-04-01',
    'Apr 1 2026',
    '2026-02-30T00:00:00Z', // Date rolls it over to 2 March
    '2026-04-01T12:00:00+24:00',
    '2026-04-01T12:00:00+02:60',
    '2026-04-01T12:00:00+0200',
    '',
  ]) {
    assert.equal(parseInstant(text), null, text);
  }
});

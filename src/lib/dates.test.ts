import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDateTime, parseDateTime } from './dates.js';

test('a date-time is accepted when a Date holds exactly the instant its fields name', () => {
  assert.equal(parseDateTime('2026-11-20T09:01:00Z'), Date.UTC(2026, 10, 20, 9, 1));
  assert.equal(parseDateTime('2026-11-20T09:01:00.250Z'), Date.UTC(2026, 10, 20, 9, 1, 0, 250));
  assert.equal(
    parseDateTime('2026-11-20T09:01:00.2509Z'),
    Date.UTC(2026, 10, 20, 9, 1, 0, 250),
    'digits after the milliseconds are dropped',
  );
  assert.equal(parseDateTime('2026-11-20T10:01:00+01:00'), Date.UTC(2026, 10, 20, 9, 1));
  assert.equal(parseDateTime('2026-11-20T08:31:00-0030'), Date.UTC(2026, 10, 20, 9, 1));
  assert.equal(parseDateTime('2026-11-20 09:01:00z'), Date.UTC(2026, 10, 20, 9, 1), 'RFC 3339 allows a space and lower case');
  assert.equal(parseDateTime('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  assert.equal(parseDateTime('0000-01-01T00:00:00Z'), Date.parse('0000-01-01T00:00:00Z'));
  assert.equal(parseDateTime('9999-12-31T23:59:59.999Z'), Date.parse('9999-12-31T23:59:59.999Z'));
});

test('a leap second, hour 24, a missing day or a partial offset is not a date-time', () => {
  for (const value of [
    '2016-12-31T23:59:60Z',
    '2030-12-31T23:59:60Z',
    '2016-12-31T23:59:60.5Z',
    '2017-01-01T00:59:60+01:00',
    '2026-11-20T24:00:00Z',
    '2026-11-20T09:60:00Z',
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-11-20T09:01:00+05',
    '2026-11-20T09:01:00+24:00',
    '2026-11-20T09:01:00',
    '2026-11-20T09:01Z',
    '2026-11-20T09:01:00.Z',
    '2026-11-20\t09:01:00Z',
    ' 2026-11-20T09:01:00Z',
    '0000-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-00:01',
    '+002026-11-20T09:01:00Z',
  ]) {
    assert.equal(parseDateTime(value), null, value);
    assert.equal(isDateTime(value), false, value);
  }
});

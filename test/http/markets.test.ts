import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/lib/clock.js';
import type { CalendarEntry } from '../../src/markets/calendar-file.js';
import { importCalendars } from '../../src/markets/calendar.service.js';
import { readShippedCalendars } from '../../src/markets/shipped-calendars.js';
import { DATABASES, listen, startRuntime, startRuntimeIn, testEnvironment } from '../support/harness.js';

type Json = Record<string, any>;

async function get(base: string, path: string): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

/** The one detail of a 422, without its message. */
function detail(body: Json): Json {
  assert.equal(body.code, 'validation_error', JSON.stringify(body));
  assert.match(body.request_id, /^req_/);
  assert.equal(body.details.length, 1, JSON.stringify(body.details));
  const { message: _message, ...rest } = body.details[0];
  return rest;
}

const shippedBrvm = readShippedCalendars().find((f) => f.file === 'BRVM.json')?.content as CalendarEntry;

for (const database of DATABASES) {
  describe(`exchanges, calendars and clocks over HTTP on ${database.name}`, () => {
    test('the exchanges, public', async (t) => {
      const base = await listen(await startRuntime(t, database, { CAURI_WORKERS: 'none' }));
      const { status, body, headers } = await get(base, '/v1/exchanges');
      assert.equal(status, 200);
      assert.ok(headers.has('x-ratelimit-limit'), 'limited per address like every public route');
      assert.deepEqual(body, {
        data: [
          { code: 'BRVM', name: 'Bourse Régionale des Valeurs Mobilières', jurisdiction: 'UEMOA', currency: 'XOF', settlement_days: 3 },
          {
            code: 'BVMAC',
            name: "Bourse des Valeurs Mobilières de l'Afrique Centrale",
            jurisdiction: 'CEMAC',
            currency: 'XAF',
            settlement_days: 3,
          },
          { code: 'GSE', name: 'Ghana Stock Exchange', jurisdiction: 'GHANA', currency: 'GHS', settlement_days: 3 },
        ],
      });
    });

    test('a calendar: open days with their phases, weekends, holidays and the eve closing at noon', async (t) => {
      const base = await listen(await startRuntime(t, database, { CAURI_WORKERS: 'none' }));
      const { status, body } = await get(base, '/v1/exchanges/BRVM/calendar?from=2026-12-23&to=2026-12-28');
      assert.equal(status, 200);
      const summary = body.data.map(
        (d: Json) => `${d.date} ${d.open} ${d.phases.length === 0 ? '-' : `${d.phases[0].start}..${d.phases.at(-1).end}`}`,
      );
      assert.deepEqual(summary, [
        '2026-12-23 true 2026-12-23T09:00:00Z..2026-12-23T15:00:00Z',
        '2026-12-24 true 2026-12-24T09:00:00Z..2026-12-24T12:00:00Z',
        '2026-12-25 false -',
        '2026-12-26 false -',
        '2026-12-27 false -',
        '2026-12-28 true 2026-12-28T09:00:00Z..2026-12-28T15:00:00Z',
      ]);
      assert.deepEqual(body.data[0].phases, [
        { name: 'pre_open', start: '2026-12-23T09:00:00Z', end: '2026-12-23T09:45:00Z' },
        { name: 'opening_auction', start: '2026-12-23T09:45:00Z', end: '2026-12-23T09:45:00Z' },
        { name: 'continuous', start: '2026-12-23T09:45:00Z', end: '2026-12-23T14:00:00Z' },
        { name: 'pre_close', start: '2026-12-23T14:00:00Z', end: '2026-12-23T14:30:00Z' },
        { name: 'closing_auction', start: '2026-12-23T14:30:00Z', end: '2026-12-23T14:30:00Z' },
        { name: 'trading_at_last', start: '2026-12-23T14:30:00Z', end: '2026-12-23T15:00:00Z' },
      ]);
      const gse = await get(base, '/v1/exchanges/GSE/calendar?from=2026-07-01&to=2026-07-02');
      assert.deepEqual(
        gse.body.data.map((d: Json) => [d.date, d.open]),
        [
          ['2026-07-01', false],
          ['2026-07-02', true],
        ],
      );
      assert.deepEqual(
        gse.body.data[1].phases.map((p: Json) => p.name),
        ['pre_open', 'continuous'],
      );
      // Across a year boundary, into the years the data covers.
      const turn = await get(base, '/v1/exchanges/BRVM/calendar?from=2026-12-31&to=2027-01-04');
      assert.deepEqual(
        turn.body.data.map((d: Json) => [d.date, d.open]),
        [
          ['2026-12-31', true],
          ['2027-01-01', false],
          ['2027-01-02', false],
          ['2027-01-03', false],
          ['2027-01-04', true],
        ],
      );
    });

    test('at most 366 days, from not after to, real dates; unknown exchanges are 404', async (t) => {
      const base = await listen(
        await startRuntime(t, database, { CAURI_WORKERS: 'none' }, { clock: new ManualClock('2026-11-25T10:00:00Z') }),
      );
      for (const [from, to, days] of [
        ['2026-01-01', '2027-01-01', 366],
        ['2028-01-01', '2028-12-31', 366],
        ['2026-11-25', '2026-11-25', 1],
      ] as const) {
        const { status, body } = await get(base, `/v1/exchanges/BVMAC/calendar?from=${from}&to=${to}`);
        assert.equal(status, 200, `${from}..${to}`);
        assert.equal(body.data.length, days);
        assert.equal(body.data.at(-1).date, to);
      }
      // The default `to` stops at the last day a date can name (it ran past it into a 500).
      for (const [from, days] of [
        ['9999-12-31', 1],
        ['9999-12-15', 17],
        ['9999-12-01', 31],
        ['0100-01-01', 31],
      ] as const) {
        const { status, body } = await get(base, `/v1/exchanges/BRVM/calendar?from=${from}`);
        assert.equal(status, 200, from);
        assert.deepEqual([body.data.length, body.data[0].date], [days, from], from);
      }
      const defaults = await get(base, '/v1/exchanges/GSE/calendar');
      assert.equal(defaults.status, 200);
      assert.deepEqual(
        [defaults.body.data.length, defaults.body.data[0].date, defaults.body.data.at(-1).date],
        [31, '2026-11-25', '2026-12-25'],
        'today and the 30 days after',
      );

      const refusals: [string, Json][] = [
        [
          '/v1/exchanges/BRVM/calendar?from=2026-01-01&to=2027-01-02',
          { field: 'to', rule: 'max_days', value: '2027-01-02', max_days: 366 },
        ],
        ['/v1/exchanges/BRVM/calendar?from=2026-11-25&to=2026-11-24', { field: 'to', rule: 'not_before_from', value: '2026-11-24' }],
        ['/v1/exchanges/BRVM/calendar?to=2026-11-01', { field: 'to', rule: 'not_before_from', value: '2026-11-01' }],
        ['/v1/exchanges/BRVM/calendar?from=2026-02-30&to=2026-03-02', { field: 'from', rule: 'format', value: '2026-02-30' }],
        ['/v1/exchanges/BRVM/calendar?from=25-11-2026', { field: 'from', rule: 'format', value: '25-11-2026' }],
        ['/v1/exchanges/BRVM/calendar?from=2026-11-25&to=tomorrow', { field: 'to', rule: 'format', value: 'tomorrow' }],
        ['/v1/exchanges/BRVM/calendar?since=2026-11-25', { field: 'since', rule: 'additionalProperties', value: '2026-11-25' }],
        // Years before 0100 are outside what the service takes as a date (they were a 500).
        ['/v1/exchanges/BRVM/calendar?from=0000-01-01&to=2026-01-02', { field: 'from', rule: 'format', value: '0000-01-01' }],
        ['/v1/exchanges/BRVM/calendar?from=2026-01-01&to=0099-12-31', { field: 'to', rule: 'format', value: '0099-12-31' }],
      ];
      for (const [path, expected] of refusals) {
        const { status, body } = await get(base, path);
        assert.equal(status, 422, path);
        assert.deepEqual(detail(body), expected, path);
      }
      for (const path of ['/v1/exchanges/NYSE/calendar', '/v1/exchanges/brvm/calendar', '/v1/exchanges/NYSE/clock', '/v1/exchanges/BRVM']) {
        const { status, body } = await get(base, path);
        assert.equal(status, 404, path);
        assert.equal(body.code, 'not_found', path);
      }
    });

    test('the clock: phase, is_open, next open and close, at the boundaries', async (t) => {
      const clock = new ManualClock('2026-11-25T08:59:59.000Z');
      const base = await listen(await startRuntime(t, database, { CAURI_WORKERS: 'none' }, { clock }));
      const read = async (exchange = 'BRVM') => (await get(base, `/v1/exchanges/${exchange}/clock`)).body;
      assert.deepEqual(await read(), {
        exchange: 'BRVM',
        timestamp: '2026-11-25T08:59:59.000Z',
        phase: 'closed',
        is_open: false,
        next_open: '2026-11-25T09:00:00Z',
        next_close: '2026-11-25T15:00:00Z',
      });
      clock.set('2026-11-25T09:00:00.000Z');
      assert.deepEqual(await read(), {
        exchange: 'BRVM',
        timestamp: '2026-11-25T09:00:00.000Z',
        phase: 'pre_open',
        is_open: true,
        next_open: '2026-11-26T09:00:00Z',
        next_close: '2026-11-25T15:00:00Z',
      });
      clock.set('2026-11-25T09:45:00.000Z');
      assert.equal((await read()).phase, 'continuous');
      clock.set('2026-11-25T14:59:59.999Z');
      assert.deepEqual([(await read()).phase, (await read()).is_open], ['trading_at_last', true]);
      clock.set('2026-11-25T15:00:00.000Z');
      assert.deepEqual(await read(), {
        exchange: 'BRVM',
        timestamp: '2026-11-25T15:00:00.000Z',
        phase: 'closed',
        is_open: false,
        next_open: '2026-11-26T09:00:00Z',
        next_close: '2026-11-26T15:00:00Z',
      });
      // Friday 24 December 2027 is an eve: closed from noon, and the next session is after Christmas.
      clock.set('2027-12-24T12:00:00.000Z');
      assert.deepEqual(await read(), {
        exchange: 'BRVM',
        timestamp: '2027-12-24T12:00:00.000Z',
        phase: 'closed',
        is_open: false,
        next_open: '2027-12-27T09:00:00Z',
        next_close: '2027-12-27T15:00:00Z',
      });
      clock.set('2026-11-28T10:00:00.000Z');
      assert.deepEqual(await read('GSE'), {
        exchange: 'GSE',
        timestamp: '2026-11-28T10:00:00.000Z',
        phase: 'closed',
        is_open: false,
        next_open: '2026-11-30T09:30:00Z',
        next_close: '2026-11-30T15:00:00Z',
      });
    });

    test('a production deployment has the calendars too, and an import reaches every process', async (t) => {
      const e = testEnvironment(t, database, { CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.example', CAURI_WORKERS: 'none' });
      const first = await startRuntimeIn(t, e);
      const second = await startRuntimeIn(t, e);
      const [a, b] = [await listen(first), await listen(second)];
      const day = async (base: string) => (await get(base, '/v1/exchanges/BRVM/calendar?from=2026-11-26&to=2026-11-26')).body.data[0].open;
      assert.equal(
        (await get(a, '/v1/exchanges/BRVM/calendar?from=2026-12-25&to=2026-12-25')).body.data[0].open,
        false,
        'shipped holidays without the sandbox seed',
      );
      assert.equal(await day(a), true);

      const holiday = {
        ...shippedBrvm,
        years: [2026],
        days: [...shippedBrvm.days.filter((d) => d.date.startsWith('2026-')), { date: '2026-11-26', name: 'Exceptional closure' }],
      };
      const report = await first.storage.db.transaction().execute((trx) => importCalendars(trx, holiday, { now: new Date() }));
      assert.equal(report.committed, true);
      assert.equal(await day(a), true, 'the calendar is read from memory, not per request');
      await first.services.calendars.reload();
      assert.equal(await day(a), false);
      assert.equal(await day(b), true, 'another process until its refresh');
      await second.services.calendars.reload();
      assert.equal(await day(b), false);
    });
  });
}

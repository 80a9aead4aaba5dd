import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DATABASES, openSharedStorages, openTestStorage } from '../../test/support/harness.js';
import { ManualClock } from '../lib/clock.js';
import { CalendarCache } from './calendar-cache.js';
import type { CalendarEntry } from './calendar-file.js';
import { listCalendarRows } from './calendar.repository.js';
import { applyShippedCalendars, importCalendars, loadMarketCalendar } from './calendar.service.js';
import { readShippedCalendars } from './shipped-calendars.js';

const now = new Date('2026-11-25T10:00:00.000Z');
const silent = pino({ level: 'silent' });

const shippedBrvm = readShippedCalendars().find((f) => f.file === 'BRVM.json')?.content as CalendarEntry;

/** BRVM's shipped 2026 calendar with one more holiday, as an operator would import it. */
function brvmWithHoliday(date: string, name = 'Exceptional closure'): CalendarEntry {
  return { ...shippedBrvm, years: [2026], days: [...shippedBrvm.days.filter((d) => d.date.startsWith('2026-')), { date, name }] };
}

for (const database of DATABASES) {
  describe(`exchange calendars on ${database.name}`, () => {
    test('a fresh database has the shipped calendars, whatever the mode, and applying them again writes nothing', async (t) => {
      // openTestStorage turns the sandbox seed off: the calendars do not depend on it.
      const { db, dialect } = await openTestStorage(t, database);
      const rows = await listCalendarRows(db);
      assert.deepEqual(
        rows.map((r) => `${r.exchange} ${r.year} ${r.origin}`),
        ['BRVM 2026 shipped', 'BRVM 2027 shipped', 'BVMAC 2026 shipped', 'BVMAC 2027 shipped', 'GSE 2026 shipped', 'GSE 2027 shipped'],
      );
      assert.deepEqual(await applyShippedCalendars(db, dialect, now), []);
      const calendar = await loadMarketCalendar(db);
      assert.equal(calendar.isOpenDay('BRVM', '2026-12-25'), false);
      assert.equal(calendar.closeOf('BRVM', '2026-12-24'), Date.parse('2026-12-24T12:00:00Z'));
    });

    test("a newer release's shipped year replaces the older shipped one, never an imported one", async (t) => {
      const { db, dialect } = await openTestStorage(t, database);
      await db.updateTable('market_calendars').set({ days: '[]' }).where('exchange', '=', 'GSE').where('year', '=', 2026).execute();
      const imported = await db.transaction().execute((trx) => importCalendars(trx, brvmWithHoliday('2026-11-26'), { now }));
      assert.equal(imported.committed, true);
      assert.deepEqual(await applyShippedCalendars(db, dialect, now), ['GSE 2026']);
      const calendar = await loadMarketCalendar(db);
      assert.equal(calendar.isOpenDay('GSE', '2026-07-01'), false, 'the shipped holidays are back');
      assert.equal(calendar.isOpenDay('BRVM', '2026-11-26'), false, "the operator's import stays");
      const origins = (await listCalendarRows(db)).map((r) => `${r.exchange} ${r.year} ${r.origin}`);
      assert.ok(origins.includes('BRVM 2026 import') && origins.includes('BRVM 2027 shipped'), origins.join());
    });

    test('an import replaces the years it lists and reports each entry', async (t) => {
      const { db } = await openTestStorage(t, database);
      const report = await db.transaction().execute((trx) => importCalendars(trx, [brvmWithHoliday('2026-11-26')], { now }));
      assert.deepEqual(report, { applied: [{ index: 0, id: 'BRVM 2026', action: 'updated' }], rejected: [], committed: true });
      const calendar = await loadMarketCalendar(db);
      assert.equal(calendar.isOpenDay('BRVM', '2026-11-26'), false);
      assert.equal(calendar.isOpenDay('BRVM', '2026-11-27'), true);
      assert.equal(calendar.isOpenDay('BRVM', '2027-01-01'), false, 'the other year is untouched');
      const again = await db.transaction().execute((trx) => importCalendars(trx, { ...shippedBrvm, years: [2030], days: [] }, { now }));
      assert.deepEqual(again.applied, [{ index: 0, id: 'BRVM 2030', action: 'created' }], 'one entry may be given without an array');
    });

    test('all or nothing: one bad entry and nothing is written; the refusal names the entry and the member', async (t) => {
      const { db } = await openTestStorage(t, database);
      const before = await listCalendarRows(db);
      const bad = { ...brvmWithHoliday('2026-11-26'), exchange: 'GSE', days: [{ date: '2026-13-01', name: 'No such day' }] };
      const report = await db.transaction().execute((trx) => importCalendars(trx, [brvmWithHoliday('2026-11-26'), bad], { now }));
      assert.equal(report.committed, false);
      assert.deepEqual(report.applied, []);
      assert.deepEqual(
        report.rejected.map((r) => [r.index, r.details.map((d) => [d.field, d.rule, d.value])]),
        [[1, [['days.0.date', 'format', '2026-13-01']]]],
      );
      assert.deepEqual(await listCalendarRows(db), before, 'nothing changed');

      const twice = await db
        .transaction()
        .execute((trx) =>
          importCalendars(trx, [brvmWithHoliday('2026-11-26'), { ...brvmWithHoliday('2026-11-27'), years: [2027, 2026] }], { now }),
        );
      assert.equal(twice.committed, false);
      assert.deepEqual(
        twice.rejected.map((r) => [r.index, r.details.map((d) => [d.field, d.rule, d.value])]),
        [[1, [['years.1', 'unique', 2026]]]],
      );
      const notJson = await db.transaction().execute((trx) => importCalendars(trx, 'BRVM', { now }));
      assert.deepEqual(
        notJson.rejected.map((r) => [r.index, r.details[0]?.field, r.details[0]?.rule]),
        [[-1, 'file', 'type']],
      );
      assert.deepEqual(await listCalendarRows(db), before, 'still nothing changed');
    });

    test("a running process sees another process's import at its next refresh, and keeps its calendar while the database fails", async (t) => {
      const [mine, other] = await openSharedStorages(t, database);
      const cache = new CalendarCache(mine.db, new ManualClock(now), silent);
      await cache.reload();
      assert.equal(cache.current().isOpenDay('BRVM', '2026-11-26'), true);
      cache.start(20);
      t.after(() => cache.stop());
      await other.db.transaction().execute((trx) => importCalendars(trx, brvmWithHoliday('2026-11-26'), { now }));
      const deadline = Date.now() + 5000;
      while (cache.current().isOpenDay('BRVM', '2026-11-26')) {
        assert.ok(Date.now() < deadline, 'the import was not picked up');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The periodic reload stops; one in flight, started before the reload below, never replaces
      // what that newer reload read.
      cache.stop();
      const loaded = await cache.reload();
      assert.equal(cache.current(), loaded);
      await mine.db.schema.dropTable('market_calendars').execute();
      await assert.rejects(cache.reload());
      assert.equal(cache.current(), loaded, 'a failed reload keeps the calendar in use');
    });
  });
}

test('operators are warned, once per change, while this year or the next has no calendar', async (t) => {
  const { db } = await openTestStorage(t, DATABASES[0]!);
  const lines: { msg: string; missing?: string[] }[] = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; missing?: string[] }) },
  );
  const clock = new ManualClock('2026-11-25T10:00:00Z');
  const cache = new CalendarCache(db, clock, log);
  await cache.reload();
  assert.equal(lines.length, 0, '2026 and 2027 are shipped');
  clock.set('2027-06-01T10:00:00Z');
  await cache.reload();
  await cache.reload();
  assert.deepEqual(
    lines.map((l) => l.missing),
    [['BRVM 2028', 'BVMAC 2028', 'GSE 2028']],
  );
  assert.match(lines[0]?.msg ?? '', /cauri calendars import/);
});

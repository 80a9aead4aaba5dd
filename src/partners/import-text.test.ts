import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { importCalendars } from '../markets/calendar.service.js';
import { readShippedCalendars } from '../markets/shipped-calendars.js';
import type { Database } from '../storage/schema.js';
import { importExchangeFees, readShippedFees } from './fee-schedule.service.js';
import { importFxRates } from './fx-rate.service.js';
import type { ImportReport } from './import.js';
import { importInstruments } from './instrument.service.js';
import { importPartners } from './partner.service.js';

const now = new Date('2026-11-25T10:00:00.000Z');
type Import = (trx: Kysely<Database>, input: unknown, options: { now: Date; allowPartial?: boolean }) => Promise<ImportReport>;

const calendar = readShippedCalendars()[0]?.content as Record<string, any>;
const fees = (readShippedFees()[0]?.content as Record<string, any>[])[0] as Record<string, any>;

/** Each import: a valid row, the same with one text member holding `bad`, the member's path, and the tables it writes. */
const IMPORTS: { name: string; run: Import; good: unknown; bad: (text: string) => unknown; field: string; tables: (keyof Database)[] }[] = [
  {
    name: 'partners',
    run: importPartners,
    good: { name: 'Good SGI', jurisdiction: 'UEMOA', capabilities: ['equities'] },
    bad: (text) => ({ name: `Bad${text}SGI`, jurisdiction: 'UEMOA', capabilities: ['equities'] }),
    field: 'name',
    tables: ['partners'],
  },
  {
    name: 'instruments',
    run: importInstruments,
    good: { code: 'NEWA.BRVM', class: 'equities', name: 'New A', reference_price_cents: 100_000 },
    bad: (text) => ({ code: 'NEWB.BRVM', class: 'equities', name: `New${text}B`, reference_price_cents: 100_000 }),
    field: 'name',
    tables: ['instruments'],
  },
  {
    name: 'reference rates',
    run: importFxRates,
    good: { date: '2026-11-24', currency: 'GHS', rate: '55.3871' },
    bad: (text) => ({ date: '2026-11-25', currency: 'GHS', rate: '55.4012', source: `Bank${text}of Ghana` }),
    field: 'source',
    tables: ['fx_rates'],
  },
  {
    name: 'exchange fees',
    run: importExchangeFees,
    good: { ...fees, effective_from: '2027-01-01' },
    bad: (text) => ({ ...fees, effective_from: '2027-02-01', source: `Notice${text}` }),
    field: 'source',
    tables: ['fee_schedules'],
  },
  {
    name: 'calendars',
    run: importCalendars,
    good: {
      ...calendar,
      years: [2026],
      days: calendar.days.filter((d: { date: string }) => d.date.startsWith('2026')),
      source: 'Imported',
    },
    bad: (text) => ({
      ...calendar,
      years: [2027],
      days: calendar.days.filter((d: { date: string }) => d.date.startsWith('2027')),
      source: `Notice${text}`,
    }),
    field: 'source',
    tables: ['market_calendars'],
  },
];

async function contents(db: Kysely<Database>, tables: (keyof Database)[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const table of tables) {
    const rows = (await db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    out.push(rows.map((r) => JSON.stringify(r)).sort());
  }
  return out;
}

for (const database of DATABASES) {
  describe(`import rows whose text cannot be stored on ${database.name}`, () => {
    test('U+0000 or a lone surrogate in a member is refused with the row and member named, and nothing stored changes', async (t) => {
      const { db } = await openTestStorage(t, database);
      for (const imp of IMPORTS) {
        for (const [text, rule] of [
          ['\u0000', 'nul_character'],
          ['\ud800', 'unicode'],
        ] as const) {
          const label = `${imp.name} ${rule}`;
          const before = await contents(db, imp.tables);
          const report = await db.transaction().execute((trx) => imp.run(trx, [imp.good, imp.bad(text)], { now }));
          assert.equal(report.committed, false, label);
          assert.deepEqual(report.applied, [], label);
          assert.deepEqual(
            report.rejected.map((r) => ({ index: r.index, details: r.details.map((d) => ({ field: d.field, rule: d.rule })) })),
            [{ index: 1, details: [{ field: imp.field, rule }] }],
            label,
          );
          assert.deepEqual(await contents(db, imp.tables), before, `${label}: nothing stored changed`);
        }
      }
    });

    test('with --allow-partial the valid rows are written and the refused one is not', async (t) => {
      const { db } = await openTestStorage(t, database);
      for (const imp of IMPORTS.filter((i) => i.name !== 'calendars' && i.name !== 'exchange fees')) {
        const report = await db.transaction().execute((trx) => imp.run(trx, [imp.good, imp.bad('\u0000')], { now, allowPartial: true }));
        assert.equal(report.committed, true, imp.name);
        assert.deepEqual(
          report.applied.map((a) => a.index),
          [0],
          imp.name,
        );
        assert.deepEqual(
          report.rejected.map((r) => r.index),
          [1],
          imp.name,
        );
      }
    });
  });
}

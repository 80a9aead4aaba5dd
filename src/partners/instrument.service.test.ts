import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { importFxRates } from './fx-rate.service.js';
import { listFxRates } from './fx-rate.repository.js';
import { getInstrument, importInstruments } from './instrument.service.js';
import { ReferenceData } from './reference-data.js';
import { ManualClock } from '../lib/clock.js';

const now = new Date('2026-11-25T10:00:00.000Z');
const row = (extra: Record<string, unknown> = {}) => ({
  code: 'SNTS.BRVM',
  class: 'equities',
  name: 'Sonatel',
  reference_price_cents: 2_550_000,
  ...extra,
});

for (const database of DATABASES) {
  describe(`instrument rules and reference rates on ${database.name}`, () => {
    test('the rules of an import row: defaults, members named at fault, kept on update', async (t) => {
      const { db } = await openTestStorage(t, database);
      const rejected = await db
        .transaction()
        .execute((trx) =>
          importInstruments(
            trx,
            [
              row({ isin: 'SN0000000018' }),
              row({ code: 'A.BRVM', isin: 'sn0000000019' }),
              row({ code: 'B.BRVM', currency: 'GHS' }),
              row({ code: 'C.BRVM', tick_size_cents: 500, reference_price_cents: 2_550_100 }),
              row({ code: 'D.BRVM', lot_size: 0 }),
              row({ code: 'E.BRVM', price_band_bps: 10_001 }),
              row({ code: 'F.BRVM', tick_size_cents: 2.5 }),
            ],
            { now, allowPartial: true },
          ),
        );
      assert.deepEqual(
        rejected.rejected.map((r) => [r.index, r.details[0]?.field, r.details[0]?.rule]),
        [
          [0, 'isin', 'check_digit'],
          [1, 'isin', 'pattern'],
          [2, 'currency', 'exchange_currency'],
          [3, 'reference_price_cents', 'tick_size'],
          [4, 'lot_size', 'minimum'],
          [5, 'price_band_bps', 'maximum'],
          [6, 'tick_size_cents', 'type'],
        ],
      );
      assert.equal(rejected.applied.length, 0);

      const report = await db
        .transaction()
        .execute((trx) =>
          importInstruments(
            trx,
            [
              row({ isin: 'SN0000000019', tick_size_cents: 500, currency: 'XOF' }),
              { code: 'MTNGH.GSE', class: 'equities', name: 'MTN Ghana', reference_price_cents: 300 },
              { code: 'FCPX.BVMAC', class: 'opcvm', name: 'A fund', reference_price_cents: 1_087_012, lot_size: 5 },
              { code: 'NOBAND.BRVM', class: 'equities', name: 'Unbanded', reference_price_cents: 100, price_band_bps: null },
            ],
            { now },
          ),
        );
      assert.equal(report.committed, true, JSON.stringify(report.rejected));
      const snts = await getInstrument(db, 'SNTS.BRVM');
      assert.deepEqual(snts, {
        code: 'SNTS.BRVM',
        exchange: 'BRVM',
        class: 'equities',
        name: 'Sonatel',
        currency: 'XOF',
        isin: 'SN0000000019',
        lot_size: 1,
        tick_size_cents: 500,
        reference_price_cents: 2_550_000,
        price_band_bps: 750,
        status: 'active',
      });
      const mtn = await getInstrument(db, 'MTNGH.GSE');
      assert.deepEqual([mtn.currency, mtn.tick_size_cents, mtn.price_band_bps, mtn.isin], ['GHS', 1, 1000, null]);
      const fund = await getInstrument(db, 'FCPX.BVMAC');
      assert.deepEqual([fund.currency, fund.lot_size, fund.price_band_bps], ['XAF', 5, null], 'funds have no band by default');
      assert.equal((await getInstrument(db, 'NOBAND.BRVM')).price_band_bps, null);

      // A daily price file gives the previous close only: the other rules stay as they were.
      const update = await db
        .transaction()
        .execute((trx) =>
          importInstruments(
            trx,
            [
              row({ reference_price_cents: 2_600_000 }),
              { code: 'NOBAND.BRVM', class: 'equities', name: 'Unbanded', reference_price_cents: 120 },
            ],
            { now },
          ),
        );
      assert.deepEqual(
        update.applied.map((a) => a.action),
        ['updated', 'updated'],
      );
      const after = await getInstrument(db, 'SNTS.BRVM');
      assert.deepEqual(
        [after.reference_price_cents, after.isin, after.tick_size_cents, after.price_band_bps],
        [2_600_000, 'SN0000000019', 500, 750],
      );
      assert.equal((await getInstrument(db, 'NOBAND.BRVM')).price_band_bps, null, 'an explicit null band is kept');
      const offGrid = await db.transaction().execute((trx) => importInstruments(trx, [row({ reference_price_cents: 2_600_100 })], { now }));
      assert.deepEqual(
        offGrid.rejected[0]?.details.map((d) => [d.field, d.rule]),
        [['reference_price_cents', 'tick_size']],
        'the stored tick applies',
      );
    });

    test('reference rates: import, validation, update of a day; the reference data sees them after invalidate()', async (t) => {
      const { db } = await openTestStorage(t, database);
      const clock = new ManualClock(now);
      const reference = new ReferenceData(db, clock, { refreshMs: 60_000 });
      assert.equal((await reference.current()).fcfaRate('GHS', '2026-11-25'), undefined);
      assert.deepEqual((await reference.current()).fcfaRate('XAF', '2026-11-25'), { num: 1n, den: 1n }, 'XAF at par, no rate needed');

      const bad = await db.transaction().execute((trx) =>
        importFxRates(
          trx,
          [
            {
              date: '2026-11-25',
              currency: 'GHS',
              rate: '55.4012',
              source: 'Bank of Ghana EUR mid-rate, crossed with 655.957 XOF per EUR',
            },
            { date: '2026-11-25', currency: 'USD', rate: '600' },
            { date: '2026-11-31', currency: 'GHS', rate: '55' },
            { date: '2026-11-24', currency: 'GHS', rate: '55.1e2' },
            { date: '2026-11-23', currency: 'GHS', rate: '0.000' },
            { date: '2026-11-25', currency: 'GHS', rate: '56' },
            { date: '2026-11-22', currency: 'GHS', rate: 55 },
          ],
          { now },
        ),
      );
      assert.equal(bad.committed, false);
      assert.deepEqual(
        bad.rejected.map((r) => [r.index, r.details[0]?.field, r.details[0]?.rule]),
        [
          [1, 'currency', 'enum'],
          [2, 'date', 'format'],
          [3, 'rate', 'pattern'],
          [4, 'rate', 'exclusiveMinimum'],
          [5, 'date', 'unique'],
          [6, 'rate', 'type'],
        ],
      );
      assert.equal((await listFxRates(db, '2000-01-01')).length, 0, 'nothing written');

      const good = await db.transaction().execute((trx) =>
        importFxRates(
          trx,
          [
            { date: '2026-11-25', currency: 'GHS', rate: '55.4012', source: 'Bank of Ghana' },
            { date: '2026-11-24', currency: 'GHS', rate: '55' },
          ],
          { now },
        ),
      );
      assert.deepEqual(
        good.applied.map((a) => [a.id, a.action]),
        [
          ['GHS:2026-11-25', 'created'],
          ['GHS:2026-11-24', 'created'],
        ],
      );
      assert.equal(
        (await reference.current()).fcfaRate('GHS', '2026-11-25'),
        undefined,
        'not read again before the refresh or an invalidation',
      );
      reference.invalidate();
      assert.deepEqual((await reference.current()).fcfaRate('GHS', '2026-11-25'), { num: 554_012n, den: 10_000n });

      const again = await db
        .transaction()
        .execute((trx) => importFxRates(trx, [{ date: '2026-11-25', currency: 'GHS', rate: '56.1' }], { now }));
      assert.deepEqual(
        again.applied.map((a) => a.action),
        ['updated'],
      );
      const [stored] = await listFxRates(db, '2026-11-25');
      assert.deepEqual([stored?.rate, stored?.source], ['56.1', null]);

      // Another process's import is seen within the refresh time: from half of it, the copy is read
      // again in the background while it keeps answering at once.
      clock.advance(30_000);
      assert.deepEqual(
        (await reference.current()).fcfaRate('GHS', '2026-11-25'),
        { num: 554_012n, den: 10_000n },
        'the copy answers at once',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (let i = 0; i < 50 && (await reference.current()).fcfaRate('GHS', '2026-11-25')?.num !== 561n; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual((await reference.current()).fcfaRate('GHS', '2026-11-25'), { num: 561n, den: 10n });

      // A copy as old as the refresh time is never served: after a quiet spell, the caller waits.
      await db.transaction().execute((trx) => importFxRates(trx, [{ date: '2026-11-25', currency: 'GHS', rate: '57' }], { now }));
      clock.advance(60_000);
      assert.deepEqual((await reference.current()).fcfaRate('GHS', '2026-11-25'), { num: 57n, den: 1n }, 'read before answering');
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import type { Storage } from '../storage/database.js';
import { importPartners } from './partner.service.js';
import { SANDBOX_PARTNERS, seedSandboxDirectory } from './sandbox-seed.js';
import { validateExchangeFeeEntry, validatePartnerFees } from './fee-file.js';
import { listSchedules } from './fee-schedule.repository.js';
import { applyShippedFees, importExchangeFees, readShippedFees } from './fee-schedule.service.js';

type Json = Record<string, any>;
const NOW = new Date('2026-11-25T10:00:00.000Z');
const shipped = readShippedFees();
const brvm = (shipped.find((f) => f.file === 'BRVM.json')?.content as Json[])[0] as Json;
const baobab = SANDBOX_PARTNERS[0] as Json;

/** Every stored row that a refused import must leave as it was. */
async function snapshot(storage: Storage): Promise<string> {
  const db = storage.db;
  return JSON.stringify([await listSchedules(db), await db.selectFrom('partners').selectAll().orderBy('id').execute()]);
}

const rules = (details: { field: string; rule: string }[]) => details.map((d) => `${d.field} ${d.rule}`);

test('the shipped schedules are valid, name their source, and cover every exchange', () => {
  assert.deepEqual(
    shipped.map((f) => f.file),
    ['BRVM.json', 'BVMAC.json', 'GSE.json'],
  );
  for (const { file, content } of shipped) {
    for (const entry of content as Json[]) {
      assert.deepEqual(validateExchangeFeeEntry(entry), [], file);
      assert.ok(entry.source.length > 100, `${file} names its source`);
      assert.equal(`${entry.exchange}.json`, file);
    }
  }
  for (const p of SANDBOX_PARTNERS) assert.deepEqual(p.fees === undefined ? ['none'] : validatePartnerFees(p.fees), [], p.name);
});

test('an exchange entry is checked whole: shape, rate precision, one component of a type per class', () => {
  assert.deepEqual(rules(validateExchangeFeeEntry({ ...brvm, effective_from: '2026-02-30', surprise: 1 })).sort(), [
    'effective_from format',
    'surprise additionalProperties',
  ]);
  const details = validateExchangeFeeEntry({
    ...brvm,
    components: [
      { type: 'exchange', name: 'a', rate_bps: 15.12345 },
      { type: 'exchange', name: 'b', rate_bps: 2, classes: ['bonds'] },
      { type: 'levy', name: 'c', rate_bps: 1, classes: ['bonds'] },
      { type: 'levy', name: 'd', rate_bps: 1, classes: ['equities'] },
    ],
    tax: { ...brvm.tax, rate_bps: 0.00001 },
  });
  assert.deepEqual(rules(details), ['components.0.rate_bps precision', 'components.1.type unique', 'tax.rate_bps precision']);
  assert.deepEqual(rules(validateExchangeFeeEntry({ ...brvm, components: [{ type: 'commission', name: 'x', rate_bps: 1 }] })), [
    'components.0.type enum',
  ]);
  assert.deepEqual(rules(validateExchangeFeeEntry({ ...brvm, tax: { name: 't', rate_bps: 10_001, on: ['tax'] } })), [
    'tax.rate_bps maximum',
    'tax.on.0 enum',
  ]);
});

test('a partner fees member is checked whole: shape, dates unique, minimum a multiple of the rounding increment', () => {
  const version = {
    effective_from: '2026-01-01',
    source: 's',
    commission: { rate_bps: 100, minimum_cents: 250_050, rounding: { increment_cents: 100 } },
  };
  assert.deepEqual(rules(validatePartnerFees([version, { ...version, commission: { rate_bps: 1.5, minimum_cents: 0 } }])), [
    'fees.0.commission.minimum_cents increment',
    'fees.1.effective_from unique',
  ]);
  assert.deepEqual(rules(validatePartnerFees([{ ...version, commission: { rate_bps: -1, minimum_cents: 0 }, by_class: { shares: {} } }])), [
    'fees.0.commission.rate_bps minimum',
    'fees.0.by_class.shares additionalProperties',
  ]);
  assert.deepEqual(rules(validatePartnerFees('free')), ['fees type']);
});

for (const database of DATABASES) {
  describe(`fee schedules on ${database.name}`, () => {
    test('the shipped schedules are written at start and left alone once an operator imports a version of the same date', async (t) => {
      const storage = await openTestStorage(t, database);
      const stored = await listSchedules(storage.db, { scope: 'exchange' });
      assert.deepEqual(
        stored.map((r) => `${r.owner} ${r.effective_from} ${r.origin}`),
        ['BRVM 2025-01-01 shipped', 'BVMAC 2024-10-02 shipped', 'GSE 2025-01-01 shipped'],
      );
      assert.deepEqual(await applyShippedFees(storage.db, storage.dialect, NOW), [], 'nothing left to write');
      const report = await storage.db.transaction().execute((trx) => importExchangeFees(trx, { ...brvm, components: [] }, { now: NOW }));
      assert.deepEqual(report.applied, [{ index: 0, id: 'BRVM 2025-01-01', action: 'updated' }]);
      assert.deepEqual(await applyShippedFees(storage.db, storage.dialect, NOW), [], 'an imported version is never overwritten');
      const [row] = await listSchedules(storage.db, { scope: 'exchange', owner: 'BRVM' });
      assert.deepEqual([row?.origin, JSON.parse(row?.content ?? '{}').components], ['import', []]);
    });

    test('a refused exchange fee file changes nothing, and says which entry and member are at fault', async (t) => {
      const storage = await openTestStorage(t, database);
      const before = await snapshot(storage);
      const good = { ...brvm, effective_from: '2027-01-01' };
      for (const [input, expected] of [
        [
          [good, { ...brvm, effective_from: '2027-01-01', components: [{ type: 'exchange', name: 'x', rate_bps: 1.23456 }] }],
          [[1, ['components.0.rate_bps precision']]],
        ],
        [[good, good], [[1, ['effective_from unique']]]],
        [[good, { ...good, exchange: 'NYSE' }], [[1, ['exchange enum']]]],
        [
          { not: 'an entry' },
          [
            [
              0,
              [
                'not additionalProperties',
                'exchange required',
                'effective_from required',
                'source required',
                'components required',
                'tax required',
              ],
            ],
          ],
        ],
        ['text', [[-1, ['file type']]]],
      ] as const) {
        const report = await storage.db.transaction().execute((trx) => importExchangeFees(trx, input, { now: NOW }));
        assert.equal(report.committed, false);
        assert.deepEqual(report.applied, []);
        assert.deepEqual(
          report.rejected.map((r) => [r.index, rules(r.details).sort()]),
          expected.map(([i, r]) => [i, [...r].sort()]),
        );
        assert.equal(await snapshot(storage), before, 'nothing stored changed');
      }
    });

    test('partner fees come with the partner import: versions added by date, others kept; a refused row changes nothing', async (t) => {
      const storage = await openTestStorage(t, database, { CAURI_SEED: 'true' });
      const mine = async () =>
        (await listSchedules(storage.db, { scope: 'partner', owner: baobab.id })).map(
          (r) => `${r.effective_from} ${JSON.parse(r.content).commission.rate_bps}`,
        );
      assert.deepEqual(await mine(), ['2026-01-01 100'], 'seeded with the sandbox directory');
      const before = await snapshot(storage);
      const bad = {
        ...baobab,
        name: 'Baobab Titres renamed',
        fees: [
          { effective_from: '2027-01-01', source: 's', commission: { rate_bps: 80, minimum_cents: 1, rounding: { increment_cents: 100 } } },
        ],
      };
      const refused = await storage.db.transaction().execute((trx) => importPartners(trx, [bad], { now: NOW }));
      assert.deepEqual(
        [refused.committed, refused.rejected.map((r) => rules(r.details))],
        [false, [['fees.0.commission.minimum_cents increment']]],
      );
      const shape = await storage.db
        .transaction()
        .execute((trx) =>
          importPartners(trx, [{ ...baobab, fees: [{ effective_from: '2027-01-01', commission: { rate_bps: 80 } }] }], { now: NOW }),
        );
      assert.deepEqual(
        shape.rejected.map((r) => rules(r.details).sort()),
        [['fees.0.commission.minimum_cents required', 'fees.0.source required']],
      );
      assert.equal(await snapshot(storage), before, 'neither the partner nor any schedule changed');

      const next = {
        effective_from: '2027-01-01',
        source: 'tariff 2027',
        commission: { rate_bps: 80, minimum_cents: 300_000, rounding: { increment_cents: 100 } },
      };
      const ok = await storage.db.transaction().execute((trx) => importPartners(trx, [{ ...baobab, fees: [next] }], { now: NOW }));
      assert.equal(ok.committed, true, JSON.stringify(ok.rejected));
      assert.deepEqual(await mine(), ['2026-01-01 100', '2027-01-01 80']);
      const without = await storage.db.transaction().execute((trx) => importPartners(trx, [{ ...baobab, fees: undefined }], { now: NOW }));
      assert.equal(without.committed, true);
      assert.deepEqual(await mine(), ['2026-01-01 100', '2027-01-01 80'], 'a row without fees keeps the stored versions');
    });

    test("a sandbox directory seeded before fee schedules existed gets each sandbox partner's schedule, once", async (t) => {
      const storage = await openTestStorage(t, database, { CAURI_SEED: 'true' });
      await storage.db.deleteFrom('fee_schedules').where('scope', '=', 'partner').execute();
      assert.equal(await seedSandboxDirectory(storage.db, storage.dialect, NOW), true);
      const owners = (await listSchedules(storage.db, { scope: 'partner' })).map((r) => r.owner).sort();
      assert.deepEqual(owners, SANDBOX_PARTNERS.map((p) => p.id as string).sort());
      assert.equal(await seedSandboxDirectory(storage.db, storage.dialect, NOW), false, 'nothing more to write');
    });
  });
}

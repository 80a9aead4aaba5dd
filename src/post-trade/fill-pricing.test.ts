import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { upsertSchedule } from '../partners/fee-schedule.repository.js';
import { readShippedFees } from '../partners/fee-schedule.service.js';
import { priceFill } from './fill-pricing.js';

const brvm = (readShippedFees().find((f) => f.file === 'BRVM.json')?.content as unknown[])[0];
const version = (effectiveFrom: string) => ({
  scope: 'exchange' as const,
  owner: 'BRVM',
  effective_from: effectiveFrom,
  source: 'test',
  content: JSON.stringify({ ...(brvm as object), effective_from: effectiveFrom }),
  origin: 'import' as const,
  updated_at: Date.now(),
});
const order = { id: 'ord_pricing', side: 'buy' as const, instrument: 'KOLA.BRVM', rcpt_to: 'sgi_pricing', filled_qty: 0 };
const execution = { fill_qty: 10, fill_price_cents: 1_500_000, executed_at: Date.UTC(2026, 10, 25, 10) };
const usedVersion = (columns: { fee_schedules: string | null }) =>
  (JSON.parse(columns.fee_schedules ?? '[]') as { scope: string; effective_from: string }[]).find((u) => u.scope === 'exchange')
    ?.effective_from;

for (const database of DATABASES) {
  describe(`fill pricing on ${database.name}`, { concurrency: 1 }, () => {
    test('fills priced in one transaction share the versions read, until a version is written in it', async (t) => {
      const storage = await openTestStorage(t, database);
      await storage.transact((trx) => upsertSchedule(trx, version('2026-01-01')));
      const used = await storage.transact(async (trx) => {
        const first = await priceFill(trx, order, execution);
        const second = await priceFill(trx, order, execution);
        // A version in force from earlier in the month, written by the same transaction (an import
        // in the same batch of units): the next fill is priced with it.
        await upsertSchedule(trx, version('2026-11-01'));
        const third = await priceFill(trx, order, execution);
        return [first, second, third].map((p) => usedVersion(p.columns));
      });
      assert.deepEqual(used, ['2026-01-01', '2026-01-01', '2026-11-01']);
      const later = await storage.transact((trx) => priceFill(trx, order, execution));
      assert.equal(usedVersion(later.columns), '2026-11-01');
    });
  });
}

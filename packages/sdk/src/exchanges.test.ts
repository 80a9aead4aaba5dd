import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriApiError } from './errors.js';
import { CauriClient } from './client.js';
import { service } from './testing/service.js';

test('exchanges, calendars and clocks without credentials', async (t) => {
  const svc = await service();
  const clock = new svc.ManualClock('2026-12-24T11:59:59.000Z');
  const runtime = await svc.startRuntime(t, svc.DATABASES[0]!, { CAURI_WORKERS: 'none' }, { clock });
  const cauri = new CauriClient({ baseUrl: await svc.listen(runtime) });

  const exchanges = await cauri.exchanges.list();
  assert.deepEqual(
    exchanges.map((e) => `${e.code} ${e.currency} T+${e.settlement_days}`),
    ['BRVM XOF T+3', 'BVMAC XAF T+3', 'GSE GHS T+3'],
  );

  const days = await cauri.exchanges.calendar('BRVM', { from: '2026-12-24', to: '2026-12-28' });
  assert.deepEqual(
    days.map((d) => [d.date, d.open, d.phases.at(-1)?.end ?? null]),
    [
      ['2026-12-24', true, '2026-12-24T12:00:00Z'],
      ['2026-12-25', false, null],
      ['2026-12-26', false, null],
      ['2026-12-27', false, null],
      ['2026-12-28', true, '2026-12-28T15:00:00Z'],
    ],
  );

  const now = await cauri.exchanges.clock('BRVM');
  assert.deepEqual(now, {
    exchange: 'BRVM',
    timestamp: '2026-12-24T11:59:59.000Z',
    phase: 'trading_at_last',
    is_open: true,
    next_open: '2026-12-28T09:00:00Z',
    next_close: '2026-12-24T12:00:00Z',
  });

  const refused = await cauri.exchanges.calendar('GSE', { from: '2026-01-01', to: '2027-06-30' }).catch((error: unknown) => error);
  assert.ok(refused instanceof CauriApiError);
  assert.equal(refused.status, 422);
  assert.deepEqual(
    refused.details?.map((d) => [d.field, d.rule]),
    [['to', 'max_days']],
  );
});

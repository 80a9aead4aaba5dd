import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { KYC3_REQUEST, orderContext, sandboxPartner } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');

for (const database of DATABASES) {
  describe(`test clocks with a busy partner on ${database.name}`, () => {
    test('an advance answers ready only once every execution due to its orders is applied, however many there are', async (t) => {
      // No background worker: only the advance itself reads the partner's executions.
      const c = await orderContext(t, database);
      const att = await c.attestation(KYC3_REQUEST);
      // Wednesday 2026-12-02, 10:30 UTC: the BRVM is in continuous trading.
      const clk = (await c.post('/v1/test-clocks', { frozen_time: '2026-12-02T10:30:00.000Z' })).body;
      // Large market orders execute in 3 to 5 parts each: together well over 500 executions, more
      // than the partner hands over in one read.
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) {
        const placed = await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'SNTS.BRVM',
          side: 'buy',
          qty: 1500,
          test_clock: clk.id,
        });
        assert.equal(placed.res.status, 201, JSON.stringify(placed.body));
        ids.push(placed.body.id);
      }
      const moved = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-12-02T11:00:00.000Z' });
      assert.deepEqual([moved.status, moved.body.status], [200, 'ready'], JSON.stringify(moved.body));
      const statuses = new Map<string, number>();
      for (const id of ids) {
        const order = await c.get(id);
        statuses.set(order.status, (statuses.get(order.status) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(statuses), { filled: 200 }, 'half an hour of continuous trading fills every market order');
    });
  });
}

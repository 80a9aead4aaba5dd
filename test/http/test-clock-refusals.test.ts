import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');

// A refusal of an order on a test clock is dated on the clock, as the order's executions and its
// other refusals are, whether the partner refused in its answer or later in its log.
for (const database of DATABASES) {
  describe(`refusals on a test clock on ${database.name}`, () => {
    test("an amend the partner refuses at once is refused at the clock's time", async (t) => {
      const c = await orderContext(t, database);
      const clock = await c.post('/v1/test-clocks', { frozen_time: '2026-12-01T11:00:00Z' });
      assert.equal(clock.status, 201, JSON.stringify(clock.body));
      const att = await c.attestation();
      const o = (
        await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 10,
          limit_price_cents: KOLA_RESTING,
          test_clock: clock.body.id,
        })
      ).body;
      assert.equal(o.status, 'routed', JSON.stringify(o));
      // 13 in an amend: the simulated SGI refuses it (partner_refused) in its answer.
      const refused = await c.post(`/v1/orders/${o.id}/amend`, { qty: 13 });
      assert.equal(refused.status, 200, JSON.stringify(refused.body));
      assert.deepEqual(refused.body.last_refusal, { request: 'amend', reason: 'partner_refused', refused_at: '2026-12-01T11:00:00.000Z' });
      const [event] = await c.events('order.request_refused', o.id);
      assert.equal(event?.last_refusal.refused_at, '2026-12-01T11:00:00.000Z');
    });
  });
}

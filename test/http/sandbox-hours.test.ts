import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { orderContext, sandboxPartner } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');
// Saturday 2026-11-28: the BRVM is closed until Monday 30 November, 09:00 UTC (pre-open), 09:45 (opening auction).
const SATURDAY = '2026-11-28T10:00:00.000Z';
const MONDAY_OPENING_AUCTION = Date.parse('2026-11-30T09:45:00.000Z');

for (const database of DATABASES) {
  describe(`the sandbox exchange's hours on real time, on ${database.name}`, () => {
    test('an order placed while the exchange is closed is routed, waits through the weekend and pre-open, and executes at the opening auction', async (t) => {
      const c = await orderContext(t, database, SATURDAY, { CAURI_SANDBOX_MARKET_HOURS: 'exchange' });
      const att = await c.attestation();
      const placed = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 });
      assert.equal(placed.res.status, 201, JSON.stringify(placed.body));
      assert.equal(placed.body.status, 'routed', 'accepted and routed while closed');
      assert.equal(placed.body.expires_at, '2026-11-30T15:00:00.000Z', "a day order lives until the next session's close");

      await c.tick(60_000);
      assert.equal((await c.get(placed.body.id)).status, 'routed', 'nothing executes on a Saturday');
      // Monday 09:44:59: pre-open takes orders without matching them.
      await c.tick(MONDAY_OPENING_AUCTION - 1000 - c.clock.now().getTime());
      assert.equal((await c.get(placed.body.id)).status, 'routed', 'nothing executes in pre-open');
      assert.deepEqual(await c.events('order.executed', placed.body.id), []);

      await c.tick(2000);
      const filled = await c.get(placed.body.id);
      assert.equal(filled.status, 'filled');
      const executions = await c.events('order.executed', placed.body.id);
      assert.equal(executions.length, 1);
      assert.equal(executions[0]?.executed_at, '2026-11-30T09:45:00.000Z', 'at the opening auction');
    });

    test('with CAURI_SANDBOX_MARKET_HOURS=always the simulated exchange executes on a Saturday', async (t) => {
      const c = await orderContext(t, database, SATURDAY, { CAURI_SANDBOX_MARKET_HOURS: 'always' });
      const att = await c.attestation();
      const placed = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 });
      assert.equal(placed.body.status, 'routed');
      await c.tick(5000);
      assert.equal((await c.get(placed.body.id)).status, 'filled');
    });
  });
}

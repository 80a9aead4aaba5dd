import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');

/** A KOLA buy of 202 resting at the partner, whose answers to a cancel or amend come 3 s later. */
async function restingOrder(c: OrderContext): Promise<Json> {
  const att = await c.attestation();
  const body = {
    rcpt_to: BAOBAB,
    kyc_attestation_id: att,
    instrument: 'KOLA.BRVM',
    side: 'buy',
    qty: 202,
    limit_price_cents: KOLA_RESTING,
  };
  return (await c.order(body)).body;
}

// Cancels and amends of one order sent at the same moment, with different keys: one request waits at
// the partner at a time, so the others see it and get 409 (an amend) or join it (a cancel), on both
// databases. The qty 202 partner answers 3 s later, so every request is still waiting when the next
// one is checked.
for (const database of DATABASES) {
  describe(`concurrent requests on one order on ${database.name}`, () => {
    test('amends at once: one is taken (202), the others get 409; the partner applies the values the order shows', async (t) => {
      const c = await orderContext(t, database);
      const o = await restingOrder(c);
      assert.equal(o.status, 'routed', JSON.stringify(o));
      const asked = [300, 400, 500, 600];
      const answers = await Promise.all(asked.map((qty) => c.post(`/v1/orders/${o.id}/amend`, { qty })));
      const taken = answers.filter((a) => a.status === 202);
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [202, 409, 409, 409],
        JSON.stringify(answers.map((a) => [a.status, a.body.pending_changes])),
      );
      const wanted = (taken[0]?.body.pending_changes as Json).qty;
      assert.deepEqual((await c.get(o.id)).pending_changes, { qty: wanted, limit_price_cents: KOLA_RESTING });
      await c.tick(3000);
      const done = await c.get(o.id);
      assert.deepEqual([done.qty, done.pending_request], [wanted, null], 'the amend the order showed is the one applied');
      assert.equal((await c.events('order.amended', o.id)).length, 1);
    });

    test('an amend and a cancel at once: the order ends cancelled, with one order.cancelled', async (t) => {
      const c = await orderContext(t, database);
      const o = await restingOrder(c);
      const [amend, cancel] = await Promise.all([
        c.post(`/v1/orders/${o.id}/amend`, { qty: 300 }),
        c.post(`/v1/orders/${o.id}/cancel`, {}),
      ]);
      assert.equal(cancel.status, 202, JSON.stringify(cancel.body));
      assert.ok([202, 409].includes(amend.status), JSON.stringify(amend.body));
      const ids = await c.runtime.storage.db
        .selectFrom('orders')
        .select(['pending_request', 'requests_made'])
        .where('id', '=', o.id)
        .executeTakeFirstOrThrow();
      // A cancel that replaced the amend is a request of its own (its own id), never a second use of the amend's.
      assert.deepEqual(ids, { pending_request: 'pending_cancel', requests_made: amend.status === 202 ? 2 : 1 });
      await c.tick(3000);
      await c.tick(3000);
      const done = await c.get(o.id);
      assert.deepEqual([done.status, done.cancel_reason, done.pending_request], ['cancelled', 'requested', null]);
      assert.equal((await c.events('order.cancelled', o.id)).length, 1);
    });
  });
}

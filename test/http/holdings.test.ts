import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { KYC3_REQUEST, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

/** Karite asks for the holdings check (its import row: `"checks": { "holdings": true }`); Baobab does not. */
const KARITE = sandboxPartner('karite');
const BAOBAB = sandboxPartner('baobab');
/** A KOLA.BRVM sell limit at the top of its band: the simulated price never reaches it, so it rests. */
const SELL_RESTING = 1_666_250;

/** The orders, the positions and the events, to show that a refusal stored nothing. */
async function stored(c: OrderContext): Promise<string> {
  const { db } = c.runtime.storage;
  return JSON.stringify(
    await Promise.all([
      db.selectFrom('orders').selectAll().orderBy('id').execute(),
      db.selectFrom('positions').selectAll().orderBy('subject_id').orderBy('instrument').execute(),
      db.selectFrom('events').select(['id', 'type']).orderBy('id').execute(),
    ]),
  );
}

function holdingsDetail(body: Json): Json {
  assert.equal(body.code, 'validation_error', JSON.stringify(body));
  const detail = (body.details as Json[]).find((d) => d.rule === 'holdings');
  assert.ok(detail !== undefined, JSON.stringify(body.details));
  return detail;
}

async function declare(c: OrderContext, subject: string, qty: number): Promise<void> {
  const res = await c.post('/v1/positions/statements', {
    subject_id: subject,
    rcpt_to: KARITE,
    as_of: '2026-11-20',
    holdings: [{ instrument: 'KOLA.BRVM', qty, average_cost_cents: 1_500_000 }],
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

for (const database of DATABASES) {
  describe(`the holdings check on ${database.name}`, () => {
    test('a sell beyond the position available (held, plus bought, less pending sells) is 422 holdings; pending sells are released when orders end; amends that raise a sell count', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const order = { rcpt_to: KARITE, kyc_attestation_id: att, instrument: 'KOLA.BRVM' };
      const sell = (qty: number, limit: number | null = SELL_RESTING) =>
        c.order({ ...order, side: 'sell', qty, ...(limit === null ? {} : { limit_price_cents: limit }) });

      let before = await stored(c);
      const none = await sell(10);
      assert.equal(none.res.status, 422);
      assert.deepEqual(holdingsDetail(none.body), {
        field: 'qty',
        rule: 'holdings',
        value: 10,
        message: 'the sell needs 10 KOLA.BRVM; 0 available (0 in the position, 0 on other open sells)',
        available_qty: 0,
        position_qty: 0,
        pending_sell_qty: 0,
      });
      assert.equal(await stored(c), before, 'nothing stored');
      assert.equal(
        (await c.order({ ...order, rcpt_to: BAOBAB, side: 'sell', qty: 10, limit_price_cents: SELL_RESTING })).res.status,
        201,
        'a partner without the check takes it',
      );
      assert.equal(
        (await c.order({ ...order, side: 'buy', qty: 10, limit_price_cents: 1_433_750 })).res.status,
        201,
        'buys are not checked',
      );

      await declare(c, KYC3_REQUEST.subject_id, 100);
      const a = await sell(60);
      assert.deepEqual([a.res.status, a.body.status], [201, 'routed']);
      before = await stored(c);
      const over = await sell(41);
      assert.equal(over.res.status, 422);
      assert.deepEqual(
        [holdingsDetail(over.body).available_qty, holdingsDetail(over.body).position_qty, holdingsDetail(over.body).pending_sell_qty],
        [40, 100, 60],
      );
      assert.equal(await stored(c), before);
      const b = await sell(40);
      assert.equal(b.res.status, 201);
      assert.equal((await sell(1)).res.status, 422, 'all taken');

      // An order that ends leaves the pending sells.
      assert.equal((await c.post(`/v1/orders/${b.body.id}/cancel`, {})).body.status, 'cancelled');
      const again = await sell(40);
      assert.equal(again.res.status, 201, JSON.stringify(again.body));

      // An amend that raises a sell counts its rise; one that lowers it frees the difference.
      before = await stored(c);
      const raise = await c.post(`/v1/orders/${a.body.id}/amend`, { qty: 61 });
      assert.equal(raise.status, 422);
      assert.deepEqual(
        [holdingsDetail(raise.body).value, holdingsDetail(raise.body).available_qty],
        [61, 60],
        'the other sells leave it 60',
      );
      assert.equal(await stored(c), before, 'the order is unchanged');
      const lower = await c.post(`/v1/orders/${a.body.id}/amend`, { qty: 50 });
      assert.deepEqual([lower.status, lower.body.qty], [200, 50]);
      assert.equal((await c.post(`/v1/orders/${a.body.id}/amend`, { qty: 60 })).status, 200, 'back up to what is free');
      assert.equal((await c.post(`/v1/orders/${a.body.id}/amend`, { qty: 50 })).status, 200);

      // A market sell that fills: the position goes down with the pending sells; available stays 0.
      const market = await sell(10, null);
      assert.equal(market.res.status, 201);
      await c.tick(1500);
      assert.equal((await c.get(market.body.id)).status, 'filled');
      const [position] = ((await (await c.api.call('GET', `/v1/positions?rcpt_to=${KARITE}`)).json()) as { data: Json[] }).data;
      assert.equal(position?.qty, 90);
      const full = await sell(1);
      assert.deepEqual([holdingsDetail(full.body).position_qty, holdingsDetail(full.body).pending_sell_qty], [90, 90]);

      // What is bought counts at once, settled or not.
      await c.order({ ...order, side: 'buy', qty: 5 });
      await c.tick(1500);
      assert.equal((await sell(5)).res.status, 201);
      assert.equal((await sell(1)).res.status, 422);
    });

    test('sells placed at the same moment: exactly as many pass as the holding covers', async (t) => {
      const c = await orderContext(t, database);
      const subjects = ['race-1', 'race-2', 'race-3'];
      for (const subject of subjects) {
        const att = await c.attestation({ ...KYC3_REQUEST, subject_id: subject });
        await declare(c, subject, 100);
        // Two sells of 60 against 100: one passes.
        const pair = await Promise.all(
          [0, 1].map(() =>
            c.order({
              rcpt_to: KARITE,
              kyc_attestation_id: att,
              instrument: 'KOLA.BRVM',
              side: 'sell',
              qty: 60,
              limit_price_cents: SELL_RESTING,
            }),
          ),
        );
        assert.deepEqual(pair.map((r) => r.res.status).sort(), [201, 422], JSON.stringify(pair.map((r) => r.body)));
        // Four of 15 against the 40 left: two pass.
        const four = await Promise.all(
          [0, 1, 2, 3].map(() =>
            c.order({
              rcpt_to: KARITE,
              kyc_attestation_id: att,
              instrument: 'KOLA.BRVM',
              side: 'sell',
              qty: 15,
              limit_price_cents: SELL_RESTING,
            }),
          ),
        );
        assert.deepEqual(four.map((r) => r.res.status).sort(), [201, 201, 422, 422], subject);
        const open = await c.runtime.storage.db
          .selectFrom('orders')
          .select(['qty'])
          .where('subject_id', '=', subject)
          .where('side', '=', 'sell')
          .execute();
        assert.equal(
          open.reduce((n, o) => n + Number(o.qty), 0),
          90,
          'what was stored never exceeds the holding',
        );
      }
    });
  });
}

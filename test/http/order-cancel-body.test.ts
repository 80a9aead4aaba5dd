import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');

/** The stored order row and its events, to check that a refusal changed nothing. */
async function snapshot(c: OrderContext, id: string): Promise<string> {
  const row = await c.runtime.storage.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  const events = await c.runtime.storage.db.selectFrom('events').select(['id', 'type']).where('subject_ref', '=', id).execute();
  return JSON.stringify({ row, events });
}

/** A POST of `raw` as it is (undefined: no body and no Content-Type), with a fresh Idempotency-Key. */
async function postRaw(c: OrderContext, path: string, raw: string | undefined): Promise<{ status: number; body: Json }> {
  const res = await c.api.call('POST', path, raw, { 'idempotency-key': randomUUID() });
  return { status: res.status, body: (await res.json()) as Json };
}

// A cancel takes no members, over HTTP, on both databases: its body is refused as the amend route
// refuses a body of the wrong shape, and no body, an empty one and `{}` are the same request.
for (const database of DATABASES) {
  describe(`the body of a cancel on ${database.name}`, () => {
    test('unknown members and bodies that are not an object are 422, as at amend; nothing changes', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const resting = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 };
      const order = (await c.order({ ...resting, limit_price_cents: KOLA_RESTING, time_in_force: 'gtc' })).body;
      assert.equal(order.status, 'routed', JSON.stringify(order));

      const cases: [string, Json[]][] = [
        ['{"reason":"x"}', [{ field: 'reason', rule: 'additionalProperties', value: 'x' }]],
        ['[1,2]', [{ field: 'body', rule: 'type', value: [1, 2] }]],
        ['"cancel"', [{ field: 'body', rule: 'type', value: 'cancel' }]],
        ['1', [{ field: 'body', rule: 'type', value: 1 }]],
        ['true', [{ field: 'body', rule: 'type', value: true }]],
        ['null', [{ field: 'body', rule: 'type', value: null }]],
      ];
      for (const [raw, expected] of cases) {
        const before = await snapshot(c, order.id);
        const cancel = await postRaw(c, `/v1/orders/${order.id}/cancel`, raw);
        assert.deepEqual([cancel.status, cancel.body.code], [422, 'validation_error'], `${raw}: ${JSON.stringify(cancel.body)}`);
        assert.deepEqual(
          cancel.body.details.map(({ message: _message, ...detail }: Json) => detail),
          expected,
          raw,
        );
        for (const d of cancel.body.details) assert.equal(typeof d.message, 'string');
        assert.equal(await snapshot(c, order.id), before, `${raw}: nothing stored changes`);
        // The amend route answers the same body with the same details.
        const amend = await postRaw(c, `/v1/orders/${order.id}/amend`, raw);
        assert.deepEqual([amend.status, amend.body.details], [422, cancel.body.details], `${raw} at amend`);
      }
      assert.equal((await c.get(order.id)).status, 'routed');
      assert.deepEqual(await c.events('order.cancelled', order.id), []);
    });

    test('no body, an empty body and {} cancel alike; a final order is still 409', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const resting = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 };
      for (const raw of [undefined, '', '{}']) {
        const order = (await c.order({ ...resting, limit_price_cents: KOLA_RESTING, time_in_force: 'gtc' })).body;
        const cancel = await postRaw(c, `/v1/orders/${order.id}/cancel`, raw);
        assert.equal(cancel.status, 200, `${JSON.stringify(raw)}: ${JSON.stringify(cancel.body)}`);
        assert.deepEqual([cancel.body.status, cancel.body.cancel_reason], ['cancelled', 'requested']);
        const final = await postRaw(c, `/v1/orders/${order.id}/cancel`, raw);
        assert.deepEqual([final.status, final.body.code], [409, 'conflict'], JSON.stringify(raw));
      }
    });
  });
}

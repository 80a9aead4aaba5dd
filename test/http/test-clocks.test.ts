import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { KOLA_RESTING, KYC3_REQUEST, orderContext, sandboxPartner, type Json } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');
// Monday 2026-11-23, an ordinary BRVM day: pre-open 09:00, opening auction 09:45, close 15:00 UTC.
const MON_08H = '2026-11-23T08:00:00.000Z';

for (const database of DATABASES) {
  describe(`test clocks on ${database.name}`, () => {
    test('orders on a clock wait while the exchange is closed, execute at the opening auction at one price, and expire once at the close', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const made = await c.post('/v1/test-clocks', { frozen_time: MON_08H, name: 'brvm monday' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const clk = made.body;
      assert.match(clk.id, /^clk_/);
      assert.deepEqual([clk.frozen_time, clk.status, clk.name], [MON_08H, 'ready', 'brvm monday']);

      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', test_clock: clk.id };
      const a = await c.order({ ...base, qty: 10 });
      const b = await c.order({ ...base, qty: 20 });
      const resting = await c.order({ ...base, qty: 5, limit_price_cents: KOLA_RESTING });
      const realTime = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        limit_price_cents: KOLA_RESTING,
      });
      for (const o of [a, b, resting]) {
        assert.equal(o.res.status, 201, JSON.stringify(o.body));
        assert.equal(o.body.status, 'routed');
        assert.equal(o.body.test_clock, clk.id);
        assert.equal(o.body.expires_at, '2026-11-23T15:00:00.000Z', "the close of the clock's day");
      }
      assert.equal(realTime.res.status, 201, JSON.stringify(realTime.body));
      assert.equal(realTime.body.test_clock, undefined);

      await c.tick(5000);
      const early = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T09:44:59.000Z' });
      assert.equal(early.status, 200, JSON.stringify(early.body));
      assert.equal((await c.get(a.body.id)).status, 'routed', 'closed, then pre-open: nothing executes');

      const open = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T09:45:00.000Z' });
      assert.deepEqual([open.body.frozen_time, open.body.status], ['2026-11-23T09:45:00.000Z', 'ready']);
      const fills = [...(await c.events('order.executed', a.body.id)), ...(await c.events('order.executed', b.body.id))];
      assert.equal(fills.length, 2);
      for (const f of fills) assert.equal(f.executed_at, '2026-11-23T09:45:00.000Z');
      assert.equal(fills[0]?.fill_price_cents, fills[1]?.fill_price_cents, 'one auction price');
      assert.equal((await c.get(a.body.id)).status, 'filled');
      assert.equal((await c.get(resting.body.id)).status, 'routed');

      const close = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T16:00:00.000Z' });
      assert.equal(close.status, 200);
      const expired = await c.get(resting.body.id);
      assert.deepEqual([expired.status, expired.cancel_reason], ['cancelled', 'expired']);
      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-24T16:00:00.000Z' });
      assert.equal((await c.events('order.cancelled', resting.body.id)).length, 1, 'expired exactly once');
      assert.equal((await c.get(realTime.body.id)).status, 'routed', 'an order on real time is not moved by the clock');
      assert.equal((await c.events('order.cancelled', realTime.body.id)).length, 0);
    });

    test('a gtd order expires at the close of its date on the clock; an ioc placed while closed is cancelled unfilled', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const clk = (await c.post('/v1/test-clocks', { frozen_time: MON_08H })).body;
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', test_clock: clk.id };
      const gtd = await c.order({ ...base, qty: 5, limit_price_cents: KOLA_RESTING, time_in_force: 'gtd', expire_date: '2026-11-24' });
      assert.equal(gtd.body.expires_at, '2026-11-24T15:00:00.000Z');
      const ioc = await c.order({ ...base, qty: 10, time_in_force: 'ioc' });
      assert.equal(ioc.res.status, 201);
      await c.tick(1000);
      const iocNow = await c.get(ioc.body.id);
      assert.deepEqual([iocNow.status, iocNow.cancel_reason, iocNow.filled_qty], ['cancelled', 'unfilled', 0]);

      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-24T14:59:59.000Z' });
      assert.equal((await c.get(gtd.body.id)).status, 'routed');
      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-26T00:00:00.000Z' });
      const after = await c.get(gtd.body.id);
      assert.deepEqual([after.status, after.cancel_reason], ['cancelled', 'expired']);
      assert.equal((await c.events('order.cancelled', gtd.body.id)).length, 1);
    });

    test('an order placed in trading at last waits for the next opening auction; a day order placed then expires unfilled at the close', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const clk = (await c.post('/v1/test-clocks', { frozen_time: '2026-11-23T14:40:00.000Z' })).body;
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10, test_clock: clk.id };
      const day = await c.order(base);
      // The top of the band: a limit every simulated price crosses.
      const marketable = await c.order({ ...base, limit_price_cents: 1_666_250 });
      const gtc = await c.order({ ...base, time_in_force: 'gtc' });
      for (const o of [day, marketable, gtc]) assert.equal(o.body.status, 'routed', JSON.stringify(o.body));

      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T14:59:59.000Z' });
      for (const o of [day, marketable, gtc]) {
        assert.equal((await c.get(o.body.id)).status, 'routed', 'nothing executes in trading at last');
        assert.deepEqual(await c.events('order.executed', o.body.id), []);
      }
      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-24T09:44:59.000Z' });
      for (const o of [day, marketable]) {
        const expired = await c.get(o.body.id);
        assert.deepEqual([expired.status, expired.cancel_reason, expired.filled_qty], ['cancelled', 'expired', 0]);
      }
      assert.equal((await c.get(gtc.body.id)).status, 'routed');
      await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-24T09:45:00.000Z' });
      assert.equal((await c.get(gtc.body.id)).status, 'filled');
      const [fill] = await c.events('order.executed', gtc.body.id);
      assert.equal(fill?.executed_at, '2026-11-24T09:45:00.000Z', "at the next session's opening auction");
    });

    test('refusals change nothing: advance backwards or too far, an unknown clock, another unknown id', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const clk = (await c.post('/v1/test-clocks', { frozen_time: MON_08H })).body;
      const back = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T07:00:00.000Z' });
      assert.equal(back.status, 422);
      assert.deepEqual(
        back.body.details.map((d: Json) => [d.field, d.rule]),
        [['frozen_time', 'after_current']],
      );
      const far = await c.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2029-11-23T07:00:00.000Z' });
      assert.deepEqual(
        far.body.details.map((d: Json) => [d.field, d.rule]),
        [['frozen_time', 'max_advance']],
      );
      const same = await c.api.call('GET', `/v1/test-clocks/${clk.id}`);
      assert.equal(((await same.json()) as Json).frozen_time, MON_08H);

      const before = await c.runtime.storage.db.selectFrom('orders').select('id').execute();
      const unknown = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        test_clock: 'clk_01kdvdna00e5fsxhz2kkrzpb8n',
      });
      assert.equal(unknown.res.status, 422);
      assert.deepEqual(
        unknown.body.details.map((d: Json) => [d.field, d.rule]),
        [['test_clock', 'exists']],
      );
      assert.equal((await c.runtime.storage.db.selectFrom('orders').select('id').execute()).length, before.length);
      assert.equal((await c.api.call('GET', '/v1/test-clocks/clk_01kdvdna00e5fsxhz2kkrzpb8n')).status, 404);

      const list = (await (await c.api.call('GET', '/v1/test-clocks')).json()) as Json;
      assert.deepEqual(
        list.data.map((x: Json) => x.id),
        [clk.id],
      );
      assert.equal((await c.api.call('DELETE', `/v1/test-clocks/${clk.id}`)).status, 200);
      assert.equal((await c.api.call('GET', `/v1/test-clocks/${clk.id}`)).status, 404);
    });
    test('the list pages like every list: limit 1 to 200 (default 50), cursor from X-Cursor-Next, newest first', async (t) => {
      const c = await orderContext(t, database);
      const made: string[] = [];
      for (let i = 0; i < 53; i++) {
        const clk = await c.post('/v1/test-clocks', { frozen_time: MON_08H, name: `clock ${i}` });
        assert.equal(clk.status, 201, JSON.stringify(clk.body));
        made.push(clk.body.id);
        c.clock.advance(1);
      }
      const newestFirst = [...made].reverse();
      const list = async (query: string) => {
        const res = await c.api.call('GET', `/v1/test-clocks${query}`);
        return { status: res.status, next: res.headers.get('x-cursor-next'), body: (await res.json()) as Json };
      };

      const first = await list('');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(Object.keys(first.body), ['data']);
      assert.deepEqual(
        first.body.data.map((x: Json) => x.id),
        newestFirst.slice(0, 50),
        'default page size 50',
      );
      assert.ok(first.next, 'a cursor to the next page');
      const rest = await list(`?cursor=${encodeURIComponent(first.next as string)}`);
      assert.deepEqual(
        rest.body.data.map((x: Json) => x.id),
        newestFirst.slice(50),
      );
      assert.equal(rest.next, '', 'empty on the last page');

      const all = await list('?limit=200');
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal(all.body.data.length, 53);
      assert.equal(all.next, '');

      for (const [query, field, rule, value] of [
        ['?limit=0', 'limit', 'minimum', 0],
        ['?limit=201', 'limit', 'maximum', 201],
        ['?limit=abc', 'limit', 'type', 'abc'],
        ['?cursor=bogus', 'cursor', 'cursor', 'bogus'],
      ] as const) {
        const bad = await list(query);
        assert.equal(bad.status, 422, query);
        assert.deepEqual(
          bad.body.details.map((d: Json) => [d.field, d.rule, d.value]),
          [[field, rule, value]],
          query,
        );
      }
      const ordersCursor = (await c.api.call('GET', '/v1/orders?limit=1')).headers.get('x-cursor-next');
      if (ordersCursor) assert.equal((await list(`?cursor=${encodeURIComponent(ordersCursor)}`)).status, 422, "another listing's cursor");
    });

    test("another client's clock is unknown: it cannot be read, advanced or placed on, and nothing is stored", async (t) => {
      const c = await orderContext(t, database);
      const clk = (await c.post('/v1/test-clocks', { frozen_time: MON_08H })).body;
      const { port } = c.runtime.app.server.address() as AddressInfo;
      const other = await apiClient(c.runtime, `http://127.0.0.1:${port}`, undefined, 'another client');
      const otherAtt = ((await (await other.post('/v1/kyc/attestations', KYC3_REQUEST)).json()) as Json).id as string;
      const before = await c.runtime.storage.db.selectFrom('orders').select('id').execute();
      const res = await other.post('/v1/orders', {
        rcpt_to: BAOBAB,
        kyc_attestation_id: otherAtt,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        test_clock: clk.id,
      });
      assert.equal(res.status, 422);
      const body = (await res.json()) as Json;
      assert.deepEqual(
        body.details.map((d: Json) => [d.field, d.rule, d.value]),
        [['test_clock', 'exists', clk.id]],
      );
      assert.equal((await c.runtime.storage.db.selectFrom('orders').select('id').execute()).length, before.length);
      assert.equal((await other.call('GET', `/v1/test-clocks/${clk.id}`)).status, 404);
      assert.equal((await other.post(`/v1/test-clocks/${clk.id}/advance`, { frozen_time: '2026-11-23T16:00:00.000Z' })).status, 404);
      const mine = (await (await c.api.call('GET', `/v1/test-clocks/${clk.id}`)).json()) as Json;
      assert.equal(mine.frozen_time, MON_08H, "the owner's clock did not move");
      assert.deepEqual(((await (await other.call('GET', '/v1/test-clocks')).json()) as Json).data, []);
    });
  });

  describe(`test clocks in production on ${database.name}`, () => {
    test('there are no test clock routes, and an order naming a clock is 422 sandbox_only', async (t) => {
      const runtime = await startRuntime(t, database, {
        CAURI_MODE: 'production',
        CAURI_PUBLIC_URL: 'https://api.example',
        CAURI_WORKERS: 'none',
      });
      const api = await apiClient(runtime, await listen(runtime));
      assert.equal((await api.post('/v1/test-clocks', { frozen_time: MON_08H })).status, 404);
      assert.equal((await api.call('GET', '/v1/test-clocks')).status, 404);
      const res = await api.post('/v1/orders', {
        rcpt_to: BAOBAB,
        kyc_attestation_id: 'att_01kdvdna00e5fsxhz2kkrzpb8n',
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 5,
        test_clock: 'clk_01kdvdna00e5fsxhz2kkrzpb8n',
      });
      assert.equal(res.status, 422);
      const body = (await res.json()) as Json;
      assert.ok(
        body.details.some((d: Json) => d.field === 'test_clock' && d.rule === 'sandbox_only'),
        JSON.stringify(body.details),
      );
    });
  });
}

import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Runtime } from '../../src/app.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { KYC2_REQUEST, type ApiClient } from '../support/api.js';
import { DATABASES, type DatabaseCase } from '../support/harness.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import { orderMatchBinary, startOrderMatch, type OrderMatch } from '../support/ordermatch.js';
import type { FixMessage } from '../support/quickfix.js';
import { eventsOf, fixDeployment, waitFor } from '../support/fix-deployment.js';
import { received, sent } from '../support/executor-deployment.js';

// The FIX connector against an order book it does not control: QuickFIX's ordermatch example,
// ported to FIX 4.4 (test/fix/ordermatch/), as the SGI's gateway. Orders go in through the HTTP API;
// the gateway matches them against each other, so two of the service's orders can trade together.
// QuickFIX acceptors listen on every address: the tests run again inside a network namespace that
// has only loopback.
if (!IN_LOOPBACK_NAMESPACE) {
  test("FIX connector against QuickFIX's ordermatch (FIX 4.4), in a loopback-only network namespace", async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  type Json = Record<string, any>;
  let nextPort = 5200;
  /** The symbols the gateway trades: an order on any other instrument of the catalogue is rejected. */
  const SYMBOLS = ['KOLA', 'CIMSN'];

  interface Deployment {
    runtime: Runtime;
    api: ApiClient;
    partnerId: string;
    gateway: OrderMatch;
  }

  /** An ordermatch gateway, and a running deployment whose partner "Ordermatch Titres" reaches it over FIX, logged on. */
  async function deployment(t: TestContext, database: DatabaseCase): Promise<Deployment> {
    const gateway = await startOrderMatch(t, nextPort++, SYMBOLS);
    const partner = { name: 'Ordermatch Titres', fix: { account: 'CAURI-OMNIBUS' } };
    const d = await fixDeployment(t, database, { port: gateway.port, targetCompId: gateway.compId }, { partner });
    const { runtime, api } = await d.start();
    return { runtime, api, partnerId: d.partnerId, gateway };
  }

  /** The gateway's log arrives through a pipe, after the messages themselves: wait for what a check reads. */
  const logged = (what: string, check: () => boolean) => waitFor(`the gateway's log: ${what}`, check, 5000);
  /** The ExecutionReports the gateway sent whose ClOrdID (11) is `clOrdId`, of ExecType `execType` when given. */
  const reports = (gateway: OrderMatch, clOrdId: string, execType?: string) =>
    sent(gateway, '8').filter((m) => m.fields.get(11) === clOrdId && (execType === undefined || m.fields.get(150) === execType));
  const only = (messages: FixMessage[], what: string): FixMessage => {
    assert.equal(messages.length, 1, `exactly one ${what}`);
    return messages[0] as FixMessage;
  };
  const fieldsOf = (message: FixMessage, tags: number[]) => Object.fromEntries(tags.map((tag) => [tag, message.fields.get(tag)]));

  /** An order of investor `subject` through the API (with a KYC2 attestation of that investor). */
  async function placeOrder(api: ApiClient, partnerId: string, subject: string, fields: Json): Promise<Json> {
    const attestation = (await (await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: subject })).json()) as Json;
    const res = await api.post('/v1/orders', {
      rcpt_to: partnerId,
      kyc_attestation_id: attestation.id,
      instrument: 'KOLA.BRVM',
      ...fields,
    });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 201, JSON.stringify(body));
    return body;
  }

  /**
   * A limit order that rests in the gateway's book (good till cancelled, so that no close of the
   * exchange's calendar cancels it while the test runs): placed, and acknowledged with a New.
   */
  async function restingOrder(d: Deployment, subject: string, fields: Json): Promise<Json> {
    const order = await placeOrder(d.api, d.partnerId, subject, { time_in_force: 'gtc', ...fields });
    assert.equal(order.status, 'routed');
    await logged(`New for ${order.id}`, () => reports(d.gateway, order.id, '0').length === 1);
    return order;
  }

  async function getOrder(api: ApiClient, id: string): Promise<Json> {
    return (await (await api.call('GET', `/v1/orders/${id}`)).json()) as Json;
  }

  async function orderWhen(api: ApiClient, id: string, status: string, filledQty?: number): Promise<Json> {
    let order: Json = {};
    await waitFor(`order ${id} to be ${status}${filledQty === undefined ? '' : ` with ${filledQty} filled`}`, async () => {
      order = await getOrder(api, id);
      return order.status === status && (filledQty === undefined || order.filled_qty === filledQty);
    });
    return order;
  }

  async function fillsOf(api: ApiClient, id: string): Promise<Json[]> {
    const res = await api.call('GET', `/v1/orders/${id}/fills`);
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: Json[] }).data;
  }

  /** Waits until `types` are the order's events, then checks that nothing more comes. */
  async function eventsAre(runtime: Runtime, orderId: string, types: string[]): Promise<void> {
    await waitFor(`events ${types.join(', ')} of ${orderId}`, async () => (await eventsOf(runtime, orderId)).length >= types.length);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a few more report polls
    assert.deepEqual(await eventsOf(runtime, orderId), types);
  }

  /** The fills of an order as quantity, price and exchange reference. */
  const fillSummary = (fills: Json[]) => fills.map((f) => ({ qty: f.qty, price_cents: f.price_cents, exchange_ref: f.exchange_ref }));

  // Built (or found in the cache) before the first test, so that no test's time-outs include the compiler's.
  await orderMatchBinary();

  // The databases' suites run side by side (each has its own acceptor, ports and service, and most of
  // their time is spent waiting: logons, heartbeats, timers); the tests of each run one after another
  // (a suite's concurrency is inherited by the suites inside it).
  describe('on each database at once', { concurrency: true }, () => {
    for (const database of DATABASES) {
      describe(`FIX connector and QuickFIX ordermatch (FIX 4.4) on ${database.name}`, { concurrency: 1 }, () => {
        test('logs on; a resting sell and a buy of another investor cross: both filled at the resting limit, each fill with its ExecID', async (t) => {
          const d = await deployment(t, database);
          await logged('Logon answered', () => received(d.gateway, 'A').length === 1 && sent(d.gateway, 'A').length === 1);
          assert.deepEqual(fieldsOf(only(received(d.gateway, 'A'), 'Logon'), [49, 56, 34, 98, 108, 141]), {
            49: 'CAURI',
            56: 'MATCH',
            34: '1',
            98: '0',
            108: '30',
            141: 'N',
          });

          const sell = await restingOrder(d, 'inv-0001', { side: 'sell', qty: 10, limit_price_cents: 1_550_000 });
          const buy = await placeOrder(d.api, d.partnerId, 'inv-0002', { side: 'buy', qty: 10, limit_price_cents: 1_560_000 });
          assert.equal(buy.status, 'routed');
          const [sellFilled, buyFilled] = await Promise.all([orderWhen(d.api, sell.id, 'filled'), orderWhen(d.api, buy.id, 'filled')]);
          for (const order of [sellFilled, buyFilled]) {
            assert.equal(order.filled_qty, 10);
            assert.equal(order.average_fill_price_cents, 1_550_000, 'the trade is at the limit of the order that rested');
          }
          const newSell = only(
            received(d.gateway, 'D').filter((m) => m.fields.get(11) === sell.id),
            'NewOrderSingle of the sell',
          );
          assert.deepEqual(fieldsOf(newSell, [1, 55, 207, 54, 38, 40, 44, 59]), {
            1: 'CAURI-OMNIBUS',
            55: 'KOLA',
            207: 'BRVM',
            54: '2',
            38: '10',
            40: '2',
            44: '15500',
            59: '1',
          });

          await logged(
            'the two trades',
            () => reports(d.gateway, sell.id, 'F').length === 1 && reports(d.gateway, buy.id, 'F').length === 1,
          );
          const sellTrade = only(reports(d.gateway, sell.id, 'F'), 'Trade of the sell');
          const buyTrade = only(reports(d.gateway, buy.id, 'F'), 'Trade of the buy');
          for (const trade of [sellTrade, buyTrade])
            assert.deepEqual(fieldsOf(trade, [39, 32, 31, 14, 151]), { 39: '2', 32: '10', 31: '15500', 14: '10', 151: '0' });
          assert.notEqual(sellTrade.fields.get(17), buyTrade.fields.get(17));
          const sellFills = await fillsOf(d.api, sell.id);
          const buyFills = await fillsOf(d.api, buy.id);
          assert.deepEqual(fillSummary(sellFills), [{ qty: 10, price_cents: 1_550_000, exchange_ref: sellTrade.fields.get(17) }]);
          assert.deepEqual(fillSummary(buyFills), [{ qty: 10, price_cents: 1_550_000, exchange_ref: buyTrade.fields.get(17) }]);
          assert.equal(sellFills[0]?.gross_cents, buyFills[0]?.gross_cents);
          await eventsAre(d.runtime, sell.id, ['order.created', 'order.routed', 'order.executed']);
          await eventsAre(d.runtime, buy.id, ['order.created', 'order.routed', 'order.executed']);
        });

        test('a resting limit order is cancelled: the gateway takes it out of its book', async (t) => {
          const d = await deployment(t, database);
          const buy = await restingOrder(d, 'inv-0001', { side: 'buy', qty: 10, limit_price_cents: 1_500_000 });
          const res = await d.api.post(`/v1/orders/${buy.id}/cancel`, undefined);
          const cancelled = (await res.json()) as Json;
          assert.equal(res.status, 200, JSON.stringify(cancelled));
          assert.equal(cancelled.status, 'cancelled');
          assert.equal(cancelled.cancel_reason, 'requested');
          assert.equal(cancelled.filled_qty, 0);

          const request = only(received(d.gateway, 'F'), 'OrderCancelRequest');
          assert.deepEqual(fieldsOf(request, [11, 41, 55, 54, 38]), { 11: `${buy.id}.1`, 41: buy.id, 55: 'KOLA', 54: '1', 38: '10' });
          await logged('Canceled', () => reports(d.gateway, `${buy.id}.1`, '4').length === 1);
          assert.deepEqual(fieldsOf(only(reports(d.gateway, `${buy.id}.1`, '4'), 'Canceled'), [41, 39, 151, 14]), {
            41: buy.id,
            39: '4',
            151: '0',
            14: '0',
          });
          await eventsAre(d.runtime, buy.id, ['order.created', 'order.routed', 'order.cancelled']);

          // A sell at the cancelled limit finds no one to trade with.
          const sell = await restingOrder(d, 'inv-0002', { side: 'sell', qty: 10, limit_price_cents: 1_500_000 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          assert.equal(sent(d.gateway, '8').filter((m) => m.fields.get(150) === 'F').length, 0, 'no trade');
          assert.equal((await getOrder(d.api, sell.id)).status, 'routed');
        });

        test('a resting limit order amended twice: each amend names the last one, and the new quantity and limit trade', async (t) => {
          const d = await deployment(t, database);
          const buy = await restingOrder(d, 'inv-0001', { side: 'buy', qty: 10, limit_price_cents: 1_500_000 });

          const first = await d.api.post(`/v1/orders/${buy.id}/amend`, { qty: 20, limit_price_cents: 1_510_000 });
          const once = (await first.json()) as Json;
          assert.equal(first.status, 200, JSON.stringify(once));
          assert.deepEqual([once.status, once.qty, once.limit_price_cents], ['routed', 20, 1_510_000]);
          const second = await d.api.post(`/v1/orders/${buy.id}/amend`, { limit_price_cents: 1_520_000 });
          const twice = (await second.json()) as Json;
          assert.equal(second.status, 200, JSON.stringify(twice));
          assert.deepEqual([twice.status, twice.qty, twice.limit_price_cents], ['routed', 20, 1_520_000]);

          const replaces = received(d.gateway, 'G');
          assert.equal(replaces.length, 2);
          assert.deepEqual(fieldsOf(replaces[0] as FixMessage, [11, 41, 38, 40, 44, 59]), {
            11: `${buy.id}.1`,
            41: buy.id,
            38: '20',
            40: '2',
            44: '15100',
            59: '1',
          });
          assert.deepEqual(fieldsOf(replaces[1] as FixMessage, [11, 41, 38, 40, 44, 59]), {
            11: `${buy.id}.2`,
            41: `${buy.id}.1`,
            38: '20',
            40: '2',
            44: '15200',
            59: '1',
          });
          await logged('the two Replaced', () => reports(d.gateway, `${buy.id}.2`, '5').length === 1);
          assert.deepEqual(fieldsOf(only(reports(d.gateway, `${buy.id}.1`, '5'), 'first Replaced'), [41, 39, 38, 44, 151]), {
            41: buy.id,
            39: '0',
            38: '20',
            44: '15100',
            151: '20',
          });
          assert.deepEqual(fieldsOf(only(reports(d.gateway, `${buy.id}.2`, '5'), 'second Replaced'), [41, 39, 38, 44, 151]), {
            41: `${buy.id}.1`,
            39: '0',
            38: '20',
            44: '15200',
            151: '20',
          });

          // A sell of 20 at 15150 crosses only the amended order (15200 for 20), at its limit.
          const sell = await placeOrder(d.api, d.partnerId, 'inv-0002', { side: 'sell', qty: 20, limit_price_cents: 1_515_000 });
          const [bought, sold] = await Promise.all([orderWhen(d.api, buy.id, 'filled'), orderWhen(d.api, sell.id, 'filled')]);
          assert.deepEqual([bought.filled_qty, bought.average_fill_price_cents], [20, 1_520_000]);
          assert.deepEqual([sold.filled_qty, sold.average_fill_price_cents], [20, 1_520_000]);
          await logged('the Trade of the amended order', () => reports(d.gateway, `${buy.id}.2`, 'F').length === 1);
          const trade = only(reports(d.gateway, `${buy.id}.2`, 'F'), 'Trade of the amended order');
          assert.deepEqual(fillSummary(await fillsOf(d.api, buy.id)), [
            { qty: 20, price_cents: 1_520_000, exchange_ref: trade.fields.get(17) },
          ]);
          await eventsAre(d.runtime, buy.id, ['order.created', 'order.routed', 'order.amended', 'order.amended', 'order.executed']);
        });

        test('a partial fill then the rest; the partial fill sent again with its ExecID, as a new message and as a PossDup resend, changes nothing', async (t) => {
          const d = await deployment(t, database);
          const sell = await restingOrder(d, 'inv-0001', { side: 'sell', qty: 100, limit_price_cents: 1_550_000 });
          const first = await placeOrder(d.api, d.partnerId, 'inv-0002', { side: 'buy', qty: 40, limit_price_cents: 1_550_000 });
          await orderWhen(d.api, first.id, 'filled');
          const partial = await orderWhen(d.api, sell.id, 'partially_filled', 40);
          assert.equal(partial.average_fill_price_cents, 1_550_000);
          await logged('the partial Trade', () => reports(d.gateway, sell.id, 'F').length === 1);
          const partialTrade = only(reports(d.gateway, sell.id, 'F'), 'partial Trade');
          assert.deepEqual(fieldsOf(partialTrade, [39, 32, 31, 14, 151]), { 39: '1', 32: '40', 31: '15500', 14: '40', 151: '60' });
          const execId = partialTrade.fields.get(17) as string;
          await eventsAre(d.runtime, sell.id, ['order.created', 'order.routed', 'order.executed']);

          await d.gateway.repeat(execId);
          await d.gateway.repeat(execId, { possDup: true });
          await logged('the two copies', () => sent(d.gateway, '8').filter((m) => m.fields.get(17) === execId).length === 3);
          const [, copy, resend] = sent(d.gateway, '8').filter((m) => m.fields.get(17) === execId) as [FixMessage, FixMessage, FixMessage];
          assert.equal(copy.fields.has(43), false, 'the first copy is a new message');
          assert.deepEqual(fieldsOf(resend, [43, 122]), { 43: 'Y', 122: partialTrade.fields.get(52) });
          for (const m of [copy, resend]) assert.deepEqual(fieldsOf(m, [11, 150, 32, 31]), fieldsOf(partialTrade, [11, 150, 32, 31]));
          await waitFor(
            'the copies to be dealt with',
            async () => ((await findSession(d.runtime.storage.db, d.partnerId))?.next_target_seq ?? 0) > Number(resend.fields.get(34)),
          );
          await eventsAre(d.runtime, sell.id, ['order.created', 'order.routed', 'order.executed']);
          const unchanged = await getOrder(d.api, sell.id);
          assert.deepEqual([unchanged.status, unchanged.filled_qty], ['partially_filled', 40]);
          assert.deepEqual(fillSummary(await fillsOf(d.api, sell.id)), [{ qty: 40, price_cents: 1_550_000, exchange_ref: execId }]);

          const rest = await placeOrder(d.api, d.partnerId, 'inv-0003', { side: 'buy', qty: 60, limit_price_cents: 1_560_000 });
          await orderWhen(d.api, rest.id, 'filled');
          const filled = await orderWhen(d.api, sell.id, 'filled', 100);
          assert.equal(filled.average_fill_price_cents, 1_550_000);
          const otherTrades = () => reports(d.gateway, sell.id, 'F').filter((m) => m.fields.get(17) !== execId);
          await logged('the last Trade', () => otherTrades().length === 1);
          const lastTrade = only(otherTrades(), 'last Trade');
          assert.deepEqual(fieldsOf(lastTrade, [39, 32, 31, 14, 151]), { 39: '2', 32: '60', 31: '15500', 14: '100', 151: '0' });
          assert.deepEqual(fillSummary(await fillsOf(d.api, sell.id)), [
            { qty: 40, price_cents: 1_550_000, exchange_ref: execId },
            { qty: 60, price_cents: 1_550_000, exchange_ref: lastTrade.fields.get(17) },
          ]);
          await eventsAre(d.runtime, sell.id, ['order.created', 'order.routed', 'order.executed', 'order.executed']);
        });

        test('market, ioc and fok orders trade against resting orders; what cannot execute at once is cancelled by the gateway', async (t) => {
          const d = await deployment(t, database);
          const sell = await restingOrder(d, 'inv-0001', { side: 'sell', qty: 12, limit_price_cents: 1_555_000 });
          const market = await placeOrder(d.api, d.partnerId, 'inv-0002', { side: 'buy', qty: 12 });
          assert.equal(market.status, 'routed');
          const [bought] = await Promise.all([orderWhen(d.api, market.id, 'filled'), orderWhen(d.api, sell.id, 'filled')]);
          assert.deepEqual([bought.filled_qty, bought.average_fill_price_cents], [12, 1_555_000]);
          const newMarket = only(
            received(d.gateway, 'D').filter((m) => m.fields.get(11) === market.id),
            'NewOrderSingle of the market order',
          );
          assert.equal(newMarket.fields.get(40), '1');
          assert.equal(newMarket.fields.has(44), false, 'a market order carries no price');
          await logged('the Trade of the market order', () => reports(d.gateway, market.id, 'F').length === 1);
          assert.deepEqual(fillSummary(await fillsOf(d.api, market.id)), [
            { qty: 12, price_cents: 1_555_000, exchange_ref: only(reports(d.gateway, market.id, 'F'), 'Trade').fields.get(17) },
          ]);

          // Nothing left to buy: the gateway accepts a market order, then cancels it.
          const unmatched = await placeOrder(d.api, d.partnerId, 'inv-0002', { side: 'buy', qty: 5 });
          const cancelled = await orderWhen(d.api, unmatched.id, 'cancelled');
          assert.deepEqual([cancelled.filled_qty, cancelled.cancel_reason], [0, 'partner']);
          await eventsAre(d.runtime, unmatched.id, ['order.created', 'order.routed', 'order.cancelled']);

          // An ioc buy of 20 against 8 offered: 8 filled, the rest cancelled as unfilled.
          await restingOrder(d, 'inv-0001', { side: 'sell', qty: 8, limit_price_cents: 1_550_000 });
          const ioc = await placeOrder(d.api, d.partnerId, 'inv-0002', {
            side: 'buy',
            qty: 20,
            limit_price_cents: 1_550_000,
            time_in_force: 'ioc',
          });
          const partly = await orderWhen(d.api, ioc.id, 'cancelled');
          assert.deepEqual([partly.filled_qty, partly.cancel_reason, partly.average_fill_price_cents], [8, 'unfilled', 1_550_000]);
          assert.equal(
            only(
              received(d.gateway, 'D').filter((m) => m.fields.get(11) === ioc.id),
              'NewOrderSingle of the ioc order',
            ).fields.get(59),
            '3',
          );
          await eventsAre(d.runtime, ioc.id, ['order.created', 'order.routed', 'order.executed', 'order.cancelled']);

          // A fok buy with nothing left to match: the gateway kills it whole.
          const fok = await placeOrder(d.api, d.partnerId, 'inv-0002', {
            side: 'buy',
            qty: 5,
            limit_price_cents: 1_550_000,
            time_in_force: 'fok',
          });
          const killed = await orderWhen(d.api, fok.id, 'cancelled');
          assert.deepEqual([killed.filled_qty, killed.cancel_reason], [0, 'unfilled']);
          assert.equal(
            only(
              received(d.gateway, 'D').filter((m) => m.fields.get(11) === fok.id),
              'NewOrderSingle of the fok order',
            ).fields.get(59),
            '4',
          );
        });

        test('an order on a symbol the gateway does not trade is rejected, with the mapped failure reason', async (t) => {
          const d = await deployment(t, database);
          const order = await placeOrder(d.api, d.partnerId, 'inv-0001', {
            instrument: 'TELCI.BRVM',
            side: 'buy',
            qty: 5,
            limit_price_cents: 2_490_000,
          });
          assert.equal(order.status, 'failed');
          assert.equal(order.failure_reason, 'sgi_rejected');
          await logged('Rejected', () => reports(d.gateway, order.id, '8').length === 1);
          assert.deepEqual(fieldsOf(only(reports(d.gateway, order.id, '8'), 'Rejected'), [39, 55, 103, 58]), {
            39: '8',
            55: 'TELCI',
            103: '1',
            58: 'Unknown symbol TELCI',
          });
          await eventsAre(d.runtime, order.id, ['order.created', 'order.failed']);
        });
      });
    }
  });
}

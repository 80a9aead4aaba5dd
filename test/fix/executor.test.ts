import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Runtime } from '../../src/app.js';
import { newId, type OrderId } from '../../src/lib/ids.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { fixTimestamp } from '../../src/routing/fix/mapping.js';
import { KYC2_REQUEST } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import type { FixMessage } from '../support/quickfix.js';
import {
  FIX_PASSWORD,
  eventsOf,
  executorDeployment,
  fillsOf,
  logged,
  orderSentNotDelivered,
  orderWhen,
  placeOrder,
  received,
  sent,
  waitFor,
  withClOrdId,
} from '../support/executor-deployment.js';

// The FIX connector against QuickFIX's executor. QuickFIX acceptors listen on every address, so this
// file runs its tests again inside a network namespace that has only loopback, where the executor
// and the service under test meet.
if (!IN_LOOPBACK_NAMESPACE) {
  test("FIX connector against QuickFIX's executor, in a loopback-only network namespace", async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  type Json = Record<string, any>;
  let nextPort = 5100;

  /** Ends the runtime as a crash would for the partner: the connection drops without a Logout. */
  async function crash(runtime: Runtime, partnerId: string): Promise<void> {
    runtime.services.fix.runner(partnerId)?.session?.drop('simulated crash');
    await runtime.close();
  }

  // The databases' suites run side by side (each has its own acceptor, ports and service, and most of
  // their time is spent waiting: logons, heartbeats, timers); the tests of each run one after another
  // (a suite's concurrency is inherited by the suites inside it).
  describe('on each database at once', { concurrency: true }, () => {
    for (const database of DATABASES) {
      describe(`FIX connector and QuickFIX executor on ${database.name}`, { concurrency: 1 }, () => {
        test('logs on with its credentials; a limit order is filled once; a market order the stock executor refuses fails', async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const { runtime, api, base } = await d.start();
          await logged(() => received(d.executor, 'A').length === 1);
          const logon = received(d.executor, 'A')[0];
          assert.ok(logon !== undefined, 'the executor saw our Logon');
          for (const [tag, value] of [
            [49, 'CAURI'],
            [56, 'EXEC'],
            [34, '1'],
            [98, '0'],
            [108, '30'],
            [141, 'N'],
            [553, 'cauri-user'],
            [554, FIX_PASSWORD],
          ] as const)
            assert.equal(logon.fields.get(tag), value, `Logon tag ${tag}`);

          const metrics = await (await fetch(`${base}/metrics`)).text();
          assert.match(metrics, new RegExp(`cauri_fix_session_logged_on\\{partner="${d.partnerId}"\\} 1`));

          const limit = await placeOrder(api, d.partnerId, { limit_price_cents: 1_500_050 });
          assert.equal(limit.status, 'routed');
          const filled = await orderWhen(api, limit.id, 'filled');
          assert.equal(filled.filled_qty, 10);
          assert.equal(filled.average_fill_price_cents, 1_500_050);
          await logged(() => withClOrdId(sent(d.executor, '8'), limit.id).length === 1);
          const order = withClOrdId(received(d.executor, 'D'), limit.id)[0];
          assert.ok(order !== undefined);
          for (const [tag, value] of [
            [1, 'CAURI-TEST'],
            [55, 'KOLA'],
            [207, 'BRVM'],
            [54, '1'],
            [38, '10'],
            [40, '2'],
            [44, '15000.5'],
            [59, '0'],
          ] as const)
            assert.equal(order.fields.get(tag), value, `NewOrderSingle tag ${tag}`);
          assert.match(order.fields.get(60) ?? '', /^\d{8}-\d{2}:\d{2}:\d{2}\.\d{3}$/);
          const execId = withClOrdId(sent(d.executor, '8'), limit.id)[0]?.fields.get(17);
          assert.deepEqual(await fillsOf(runtime, limit.id), [{ fill_qty: 10, fill_price_cents: 1_500_050, exchange_ref: execId }]);
          await waitFor('the fill event', async () => (await eventsOf(runtime, limit.id)).includes('order.executed'));
          await new Promise((resolve) => setTimeout(resolve, 600)); // a few more report polls: nothing applies twice
          assert.deepEqual(await eventsOf(runtime, limit.id), ['order.created', 'order.routed', 'order.executed']);

          // The executor Debian ships fills limit orders only: it refuses a market order with a
          // session-level Reject of its OrdType (40).
          const market = await placeOrder(api, d.partnerId, { limit_price_cents: undefined });
          assert.equal(market.status, 'failed');
          assert.equal(market.failure_reason, 'sgi_rejected');
          const refusedSeq = withClOrdId(received(d.executor, 'D'), market.id)[0]?.fields.get(34);
          await logged(() => sent(d.executor, '3').some((m) => m.fields.get(45) === refusedSeq));
          const reject = sent(d.executor, '3').find((m) => m.fields.get(45) === refusedSeq);
          assert.equal(reject?.fields.get(371), '40');
          assert.deepEqual(await eventsOf(runtime, market.id), ['order.created', 'order.failed']);
        });

        test('a market order is filled at the price the executor gives', async (t) => {
          const d = await executorDeployment(t, database, nextPort++, { executor: { kind: 'market-fills', marketPrice: '15500.25' } });
          const { runtime, api } = await d.start();
          const market = await placeOrder(api, d.partnerId, { side: 'buy', qty: 12, limit_price_cents: undefined });
          assert.equal(market.status, 'routed');
          const filled = await orderWhen(api, market.id, 'filled');
          assert.equal(filled.filled_qty, 12);
          assert.equal(filled.average_fill_price_cents, 1_550_025);
          await logged(() => withClOrdId(sent(d.executor, '8'), market.id).length === 1);
          const order = withClOrdId(received(d.executor, 'D'), market.id)[0];
          assert.equal(order?.fields.get(40), '1');
          assert.equal(order?.fields.has(44), false, 'a market order carries no price');
          assert.equal(order?.fields.get(38), '12');
          assert.equal((await fillsOf(runtime, market.id)).length, 1);
          await waitFor('the fill event', async () => (await eventsOf(runtime, market.id)).includes('order.executed'));
          assert.deepEqual(await eventsOf(runtime, market.id), ['order.created', 'order.routed', 'order.executed']);
        });

        test("the gateway's answer and fill reach the order as they are recorded, without the routing loop reading the log", async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const { runtime, api } = await d.start();
          // Another process holds the lease on the partner's report log: this one's routing loop cannot read it.
          await runtime.storage.db
            .insertInto('connector_positions')
            .values({
              connector: `fix:${d.partnerId}`,
              position: null,
              lease_owner: 'another-process',
              lease_until: Date.now() + 3_600_000,
            })
            .execute();
          const order = await placeOrder(api, d.partnerId, { limit_price_cents: 1_500_050 });
          assert.equal(order.status, 'routed');
          const filled = await orderWhen(api, order.id, 'filled');
          assert.equal(filled.filled_qty, 10);
          assert.equal((await fillsOf(runtime, order.id)).length, 1);
          const events = await runtime.storage.db
            .selectFrom('events')
            .select(['type', 'origin'])
            .where('subject_ref', '=', order.id)
            .orderBy('id')
            .execute();
          assert.deepEqual(
            events.map((e) => e.type),
            ['order.created', 'order.routed', 'order.executed'],
          );
          const origins = events.map((e) => (e.origin == null ? null : (JSON.parse(e.origin) as Json).request_id));
          assert.ok(origins[0] !== null && origins[1] === origins[0], "the answer's event keeps the POST's request id");
          assert.equal(origins[2], null, "the fill is the partner's doing");
          const log = await runtime.storage.db
            .selectFrom('connector_positions')
            .selectAll()
            .where('connector', '=', `fix:${d.partnerId}`)
            .executeTakeFirstOrThrow();
          assert.deepEqual({ owner: log.lease_owner, position: log.position }, { owner: 'another-process', position: null });
        });

        test("Account (1) is the subject's registered account at the SGI, else the partner's default; a change after the order is not sent", async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const { api } = await d.start();
          const registration = await api.call('PUT', `/v1/subjects/${KYC2_REQUEST.subject_id}/accounts/${d.partnerId}`, {
            account_number: 'INV-0001/BRVM',
          });
          assert.equal(registration.status, 201, await registration.text());
          const registered = await placeOrder(api, d.partnerId, { limit_price_cents: 1_500_000 });
          assert.equal(registered.status, 'routed');
          await api.call('PUT', `/v1/subjects/${KYC2_REQUEST.subject_id}/accounts/${d.partnerId}`, { account_number: 'CHANGED-LATER' });

          const other = (await (await api.post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'inv-0002' })).json()) as Json;
          const res = await api.post('/v1/orders', {
            rcpt_to: d.partnerId,
            kyc_attestation_id: other.id,
            instrument: 'KOLA.BRVM',
            side: 'buy',
            qty: 10,
            limit_price_cents: 1_500_000,
          });
          const byDefault = (await res.json()) as Json;
          assert.equal(byDefault.status, 'routed');
          await orderWhen(api, registered.id, 'filled');
          await orderWhen(api, byDefault.id, 'filled');
          await logged(
            () =>
              withClOrdId(received(d.executor, 'D'), byDefault.id).length === 1 &&
              withClOrdId(received(d.executor, 'D'), registered.id).length === 1,
          );
          assert.deepEqual(
            withClOrdId(received(d.executor, 'D'), registered.id).map((m) => m.fields.get(1)),
            ['INV-0001/BRVM'],
          );
          assert.deepEqual(
            withClOrdId(received(d.executor, 'D'), byDefault.id).map((m) => m.fields.get(1)),
            ['CAURI-TEST'],
          );
        });

        test('a cancel of an order the executor already filled is refused', async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const { runtime } = await d.start();
          const connector = runtime.services.fix.connector(d.partnerId);
          const session = runtime.services.fix.runner(d.partnerId)?.session;
          // Hold what the executor says until the cancel has gone out behind the order.
          const socket = (session as unknown as { transport: { duplex: { readable: Readable } } }).transport.duplex.readable;
          socket.pause();
          const orderId = newId('order');
          const submitted = connector.submit({
            order_id: orderId,
            instrument: 'KOLA.BRVM',
            instrument_status: 'active',
            side: 'sell',
            qty: 5,
            limit_price_cents: 1_550_000,
            reference_price_cents: 1_550_000,
            time_in_force: 'day',
            expire_date: null,
          });
          await waitFor('the order to go out', () => received(d.executor, 'D').length === 1);
          const cancelled = connector.cancel(orderId, { request_id: `${orderId}.1`, reason: 'requested' });
          await waitFor('the cancel to go out', () => received(d.executor, 'F').length === 1);
          socket.resume();
          assert.equal((await submitted).status, 'accepted');
          assert.deepEqual(await cancelled, { status: 'refused', reason: 'already_filled' });
          await logged(() => sent(d.executor, 'j').length === 1);
          const cancel = received(d.executor, 'F')[0];
          assert.equal(cancel?.fields.get(41), orderId);
          assert.equal(cancel?.fields.get(11), `${orderId}.1`, 'the cancel is sent under the request id');
          assert.equal(
            sent(d.executor, 'j')
              .find((m) => m.fields.get(45) === cancel?.fields.get(34))
              ?.fields.get(372),
            'F',
          );
          assert.deepEqual(
            (await connector.reports(null)).reports.map((r) => r.type),
            ['accepted', 'fill'],
          );
          // Asked again, the connector answers from the report log without asking the executor.
          assert.deepEqual(await connector.cancel(orderId as OrderId, { request_id: `${orderId}.1`, reason: 'requested' }), {
            status: 'refused',
            reason: 'already_filled',
          });
          assert.equal(received(d.executor, 'F').length, 1);
        });

        test('after a restart mid-session the sequence numbers continue from the database and the executor accepts the logon', async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const first = await d.start();
          const before = await placeOrder(first.api, d.partnerId, { limit_price_cents: 1_500_000 });
          await orderWhen(first.api, before.id, 'filled');
          await crash(first.runtime, d.partnerId);

          const second = await d.start();
          await logged(() => sent(d.executor, 'A').length === 2);
          const incoming = d.executor.messages().filter((m) => m.direction === 'incoming');
          const logons = incoming.filter((m) => m.fields.get(35) === 'A');
          assert.equal(logons.length, 2);
          const lastBeforeRestart = Number(incoming[incoming.indexOf(logons[1] as FixMessage) - 1]?.fields.get(34));
          assert.equal(Number(logons[1]?.fields.get(34)), lastBeforeRestart + 1, 'the logon continues the sequence');
          assert.equal(logons[1]?.fields.get(141), 'N');
          assert.equal(sent(d.executor, '5').length, 0, 'the executor logged nobody out');
          // The crashed process's lease on reading the partner's report log would run out within 30 s;
          // the test does not wait for it.
          await second.runtime.storage.transact((trx) => trx.updateTable('connector_positions').set({ lease_until: 0 }).execute());
          const after = await placeOrder(second.api, d.partnerId, { limit_price_cents: 1_500_100 });
          assert.equal(after.status, 'routed');
          await orderWhen(second.api, after.id, 'filled');
        });

        test('a ResendRequest from the executor is answered from the store, with PossDup and the original sending time', async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const first = await d.start();
          await first.runtime.close();

          // What a crash leaves when it strikes after a NewOrderSingle was committed as sent and before
          // its bytes left: the order handed over in the database, the executor never told.
          const sentAt = Date.now() - 5000;
          const { orderId, seq } = await orderSentNotDelivered(d, first.api.clientId, sentAt, 'INV-RESENT');

          const second = await d.start();
          const { db } = second.runtime.storage;
          await waitFor(
            'the order to be filled',
            async () => (await db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirst())?.status === 'filled',
          );
          await logged(() => withClOrdId(sent(d.executor, '8'), orderId).length === 1);
          const resendRequest = sent(d.executor, '2')[0];
          assert.equal(resendRequest?.fields.get(7), String(seq), 'the executor asked for the message it never got');
          const resent = withClOrdId(received(d.executor, 'D'), orderId);
          assert.equal(resent.length, 1);
          assert.equal(resent[0]?.fields.get(34), String(seq));
          assert.equal(resent[0]?.fields.get(43), 'Y');
          assert.equal(resent[0]?.fields.get(122), fixTimestamp(sentAt));
          assert.equal(resent[0]?.fields.get(44), '14500');
          assert.equal(resent[0]?.fields.get(1), 'INV-RESENT', 'the resend carries the account the order was sent with');
          assert.equal((await fillsOf(second.runtime, orderId)).length, 1);
        });

        test('a copy of an ExecutionReport already applied (same ExecID, PossDup) changes nothing', async (t) => {
          const d = await executorDeployment(t, database, nextPort++);
          const first = await d.start();
          const order = await placeOrder(first.api, d.partnerId, { limit_price_cents: 1_500_000 });
          await orderWhen(first.api, order.id, 'filled');
          await waitFor('the fill event', async () => (await eventsOf(first.runtime, order.id)).includes('order.executed'));
          await logged(() => withClOrdId(sent(d.executor, '8'), order.id).length === 1);
          const report = withClOrdId(sent(d.executor, '8'), order.id)[0];
          const reportSeq = Number(report?.fields.get(34));
          const reportsBefore = (await first.runtime.services.fix.connector(d.partnerId).reports(null)).reports.length;
          await first.runtime.close();

          // The executor is made to send the report again: the store forgets it was received, so the next
          // logon finds a gap and asks for everything from the report on.
          const storage = await openDatabase(d.env.config, d.env.options);
          try {
            await storage.transact((trx) =>
              trx.updateTable('fix_sessions').set({ next_target_seq: reportSeq }).where('partner_id', '=', d.partnerId).execute(),
            );
          } finally {
            await storage.close();
          }
          const second = await d.start();
          await waitFor('the executor to send the report again', () => withClOrdId(sent(d.executor, '8'), order.id).length === 2);
          const copy = withClOrdId(sent(d.executor, '8'), order.id)[1];
          assert.equal(copy?.fields.get(43), 'Y');
          assert.equal(copy?.fields.get(17), report?.fields.get(17));
          await waitFor(
            'the copy to be dealt with',
            async () => ((await findSession(second.runtime.storage.db, d.partnerId))?.next_target_seq ?? 0) > Number(copy?.fields.get(34)),
          );
          await new Promise((resolve) => setTimeout(resolve, 600));
          assert.equal((await fillsOf(second.runtime, order.id)).length, 1);
          assert.deepEqual(await eventsOf(second.runtime, order.id), ['order.created', 'order.routed', 'order.executed']);
          assert.equal((await second.runtime.services.fix.connector(d.partnerId).reports(null)).reports.length, reportsBefore);
        });
      });
    }
  });
}

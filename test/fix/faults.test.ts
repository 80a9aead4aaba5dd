import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Runtime } from '../../src/app.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { eventsOf, fillsOf, fixDeployment, getOrder, metric, orderWhen, placeOrder, sleep, waitFor } from '../support/fix-deployment.js';
import { logged, received, sent, withClOrdId } from '../support/executor-deployment.js';
import { acceptOrders, startRawGateway } from '../support/fix-gateway.js';
import { startFixProxy } from '../support/fix-proxy.js';
import type { FixFrame } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import { startExecutor } from '../support/quickfix.js';

// Faults between the FIX connector and a gateway: QuickFIX's executor killed and restarted, messages
// lost on the network both ways (a proxy between the two drops or holds them), a gateway that stays
// down, logons refused. What a gateway written on the bytes sends that QuickFIX never does is in
// faults-gateway.test.ts. QuickFIX acceptors listen on every address, so the file runs again inside
// a network namespace that has only loopback.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX connector faults, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  let nextPort = 5200;

  async function routing(
    runtime: Runtime,
    orderId: string,
  ): Promise<{ status: string; route_attempts: number; next_route_at: number | null }> {
    return runtime.storage.db
      .selectFrom('orders')
      .select(['status', 'route_attempts', 'next_route_at'])
      .where('id', '=', orderId)
      .executeTakeFirstOrThrow();
  }

  /** A port nothing listens on (yet). */
  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  // The databases' suites run side by side (each has its own acceptor, ports and service, and most of
  // their time is spent waiting: logons, heartbeats, timers); the tests of each run one after another
  // (a suite's concurrency is inherited by the suites inside it).
  describe('on each database at once', { concurrency: true }, () => {
    for (const database of DATABASES) {
      describe(`FIX connector faults on ${database.name}`, { concurrency: 1 }, () => {
        test('the executor killed and restarted mid-session: reconnection with backoff, the report in flight asked for again, orders placed meanwhile stay created and reach it once', async (t) => {
          const executor = await startExecutor(t, nextPort++);
          const proxy = await startFixProxy(t, executor.port);
          const d = await fixDeployment(t, database, { port: proxy.port });
          const { runtime, api, base } = await d.start();
          const first = await placeOrder(api, d.partnerId);
          await orderWhen(api, first.id, 'filled');

          // The executor fills the next order, and dies while its report is still on the way.
          proxy.rule = (m, direction) => (direction === 'to_service' && m.fields.get(35) === '8' ? 'hold' : 'pass');
          const inFlight = placeOrder(api, d.partnerId);
          await waitFor('the fill to be on the way', () => proxy.held().some((m) => m.fields.get(35) === '8'));
          const lostReport = proxy.held().find((m) => m.fields.get(35) === '8') as FixFrame;
          const second = lostReport.fields.get(11) as string;
          const connectionsBefore = proxy.accepted.length;
          await executor.stop();
          const killedAt = Date.now();
          proxy.rule = () => 'pass';
          assert.equal((await inFlight).status, 'created', 'the order has no answer yet');

          await waitFor('the session to be down', () => runtime.services.fix.runner(d.partnerId)?.session === null);
          const third = await placeOrder(api, d.partnerId, { qty: 3 });
          assert.equal(third.status, 'created', 'an order placed while the gateway is down waits');
          // What the operator sees meanwhile: the session down with its error, the order waiting and retried.
          const session = await findSession(runtime.storage.db, d.partnerId);
          // Down: between attempts, or already trying the next one.
          assert.match(session?.state ?? '', /^(disconnected|connecting)$/);
          assert.match(session?.last_error ?? '', /^the gateway closed the connection/);
          assert.equal(await metric(base, new RegExp(`cauri_fix_session_logged_on\\{partner="${d.partnerId}"\\} (\\d)`)), '0');
          await waitFor('a second hand-over attempt', async () => (await routing(runtime, third.id)).route_attempts >= 2);
          assert.equal((await routing(runtime, third.id)).status, 'created');

          // Two connection attempts fail while it is down: after 1 s, then 2 s (+-20 %; the upper
          // bounds leave room for a loaded machine).
          await waitFor('two connection attempts', () => proxy.accepted.length >= connectionsBefore + 2, 10_000);
          const [attempt1, attempt2] = proxy.accepted.slice(connectionsBefore) as [number, number];
          assert.ok(attempt1 - killedAt >= 750 && attempt1 - killedAt <= 3000, `first reconnection after ${attempt1 - killedAt} ms`);
          assert.ok(attempt2 - attempt1 >= 1550 && attempt2 - attempt1 <= 4500, `second reconnection ${attempt2 - attempt1} ms later`);
          await executor.start();

          await orderWhen(api, second, 'filled');
          await orderWhen(api, third.id, 'filled');
          // The logon continued the numbers; the executor's Logon showed the gap; the service asked for the report again.
          await logged(() => withClOrdId(sent(executor, '8'), second).length === 2);
          const logons = received(executor, 'A');
          assert.equal(logons.at(-1)?.fields.get(141), 'N');
          const resendRequest = executor.messages().find((m) => m.direction === 'incoming' && m.fields.get(35) === '2');
          assert.equal(resendRequest?.fields.get(7), lostReport.fields.get(34), 'the service asked for the report it never got');
          const copy = withClOrdId(sent(executor, '8'), second)[1];
          assert.equal(copy?.fields.get(43), 'Y');
          assert.equal(copy?.fields.get(17), lostReport.fields.get(17));
          // Each order reached the executor once, and was filled once.
          for (const id of [first.id, second, third.id])
            assert.equal(withClOrdId(received(executor, 'D'), id).length, 1, `NewOrderSingle of ${id}`);
          for (const id of [first.id, second, third.id]) {
            assert.equal((await fillsOf(runtime, id)).length, 1, `fills of ${id}`);
            await waitFor('the fill event', async () => (await eventsOf(runtime, id)).includes('order.executed'));
            assert.deepEqual(await eventsOf(runtime, id), ['order.created', 'order.routed', 'order.executed']);
          }
          assert.equal(sent(executor, '3').length, 0, 'the executor rejected nothing');
          assert.equal(sent(executor, '5').length, 0, 'the executor logged nobody out');
        });

        test('sequence gaps both ways in a live session: the missing report is asked for and applied once, the missing order is resent with PossDup and its first SendingTime', async (t) => {
          const executor = await startExecutor(t, nextPort++);
          const proxy = await startFixProxy(t, executor.port);
          const d = await fixDeployment(t, database, { port: proxy.port });
          const { runtime, api } = await d.start();

          // The gateway's numbers jump: its report of the first order is lost on the way.
          let dropped: FixFrame | null = null;
          proxy.rule = (m, direction) => {
            if (dropped !== null || direction !== 'to_service' || m.fields.get(35) !== '8') return 'pass';
            dropped = m;
            return 'drop';
          };
          const a = placeOrder(api, d.partnerId);
          await waitFor('the report to be lost', () => dropped !== null);
          const b = await placeOrder(api, d.partnerId, { qty: 4 });
          const aId = (dropped as unknown as FixFrame).fields.get(11) as string;
          await orderWhen(api, aId, 'filled');
          await orderWhen(api, b.id, 'filled');
          await a;
          const resendRequests = proxy.messages.filter((m) => m.direction === 'to_gateway' && m.fields.get(35) === '2');
          assert.equal(resendRequests.length, 1);
          assert.equal(resendRequests[0]?.fields.get(7), (dropped as unknown as FixFrame).fields.get(34));
          // b's report came beyond the gap and again as a resend: applied once. It was held until a's
          // resent report filled the gap, so b can be filled before its own resent copy has passed.
          const reportsOfB = () =>
            proxy.messages.filter((m) => m.direction === 'to_service' && m.fields.get(11) === b.id && m.fields.get(35) === '8');
          await waitFor("b's report to be resent", () => reportsOfB().length === 2, 5000);
          const bReports = reportsOfB();
          assert.deepEqual(
            bReports.map((m) => m.fields.get(43) ?? 'N'),
            ['N', 'Y'],
          );
          assert.equal(bReports[0]?.fields.get(17), bReports[1]?.fields.get(17));
          for (const id of [aId, b.id]) {
            assert.equal((await fillsOf(runtime, id)).length, 1, `fills of ${id}`);
            await waitFor('the fill event', async () => (await eventsOf(runtime, id)).includes('order.executed'));
            assert.deepEqual(await eventsOf(runtime, id), ['order.created', 'order.routed', 'order.executed']);
          }
          const lastFromGateway = Math.max(
            ...proxy.messages.filter((m) => m.direction === 'to_service').map((m) => Number(m.fields.get(34))),
          );
          await waitFor(
            'the numbers to be committed',
            async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === lastFromGateway + 1,
          );

          // The service's numbers jump: its order is lost on the way, and the executor asks for it.
          let lostOrder: FixFrame | null = null;
          proxy.rule = (m, direction) => {
            if (lostOrder !== null || direction !== 'to_gateway' || m.fields.get(35) !== 'D') return 'pass';
            lostOrder = m;
            return 'drop';
          };
          const c = placeOrder(api, d.partnerId, { qty: 5 });
          await waitFor('the order to be lost', () => lostOrder !== null);
          await sleep(100);
          const dOrder = await placeOrder(api, d.partnerId, { qty: 6 });
          const lost = lostOrder as unknown as FixFrame;
          const cId = lost.fields.get(11) as string;
          await orderWhen(api, cId, 'filled');
          await orderWhen(api, dOrder.id, 'filled');
          await c;
          await logged(() => sent(executor, '2').length === 1 && withClOrdId(received(executor, 'D'), cId).length === 1);
          assert.equal(sent(executor, '2')[0]?.fields.get(7), lost.fields.get(34), 'the executor asked for the order it never got');
          const resent = withClOrdId(received(executor, 'D'), cId)[0];
          assert.equal(resent?.fields.get(34), lost.fields.get(34));
          assert.equal(resent?.fields.get(43), 'Y');
          assert.equal(resent?.fields.get(122), lost.fields.get(52), 'OrigSendingTime is the first transmission');
          assert.ok((resent?.fields.get(52) ?? '') > (lost.fields.get(52) ?? ''), 'SendingTime is the resend');
          assert.equal(resent?.fields.get(38), '5');
          const gapFills = proxy.messages.filter((m) => m.direction === 'to_gateway' && m.fields.get(35) === '4');
          assert.ok(
            gapFills.every(
              (m) => Number(m.fields.get(34)) > Number(lost.fields.get(34)) || Number(m.fields.get(36)) <= Number(lost.fields.get(34)),
            ),
            'no gap fill over the order',
          );
          // Each order filled once by the executor, and once in the service.
          for (const id of [cId, dOrder.id]) {
            assert.equal(withClOrdId(sent(executor, '8'), id).length, 1, `reports of ${id}`);
            assert.equal((await fillsOf(runtime, id)).length, 1);
          }
          assert.equal(sent(executor, '3').length, 0, 'the executor rejected nothing');
        });

        test('a gateway that stays down: orders stay created and are retried, the operator sees why, and they are handed over once it answers', async (t) => {
          const port = await freePort();
          const d = await fixDeployment(t, database, { port });
          const { runtime, api, base } = await d.start({ logon: false });
          const order = await placeOrder(api, d.partnerId);
          assert.equal(order.status, 'created');
          await waitFor('three hand-over attempts', async () => (await routing(runtime, order.id)).route_attempts >= 3);
          const waiting = await routing(runtime, order.id);
          assert.equal(waiting.status, 'created');
          assert.notEqual(waiting.next_route_at, null, 'another attempt is due');
          const session = await findSession(runtime.storage.db, d.partnerId);
          // Down: between attempts, or already trying the next one.
          assert.match(session?.state ?? '', /^(disconnected|connecting)$/);
          assert.match(session?.last_error ?? '', /ECONNREFUSED/);
          assert.equal(await metric(base, new RegExp(`cauri_fix_session_logged_on\\{partner="${d.partnerId}"\\} (\\d)`)), '0');
          assert.equal((await getOrder(api, order.id)).status, 'created');

          // As after a long outage, the order's next attempt is a minute away: the logon makes it due.
          await runtime.storage.db
            .updateTable('orders')
            .set({ next_route_at: Date.now() + 60_000 })
            .where('id', '=', order.id)
            .execute();
          const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', port, onApplication: acceptOrders });
          await orderWhen(api, order.id, 'routed', 20_000);
          assert.equal(gateway.received.filter((f) => f.fields.get(35) === 'D' && f.fields.get(11) === order.id).length, 1);
        });

        test("a refused logon: the operator reads the executor's reason, and the number it expects lets the session log on", async (t) => {
          const executor = await startExecutor(t, nextPort++);
          const d = await fixDeployment(t, database, { port: executor.port });
          const first = await d.start();
          await orderWhen(first.api, (await placeOrder(first.api, d.partnerId)).id, 'filled');
          first.runtime.services.fix.runner(d.partnerId)?.session?.drop('simulated crash');
          await first.runtime.close();
          // As after restoring an old backup of the database: this side's numbers went back.
          const storage = await openDatabase(d.env.config, d.env.options);
          await storage.db.updateTable('fix_sessions').set({ next_sender_seq: 1 }).where('partner_id', '=', d.partnerId).execute();
          await storage.close();
          const { db } = (await d.start({ logon: false })).runtime.storage;
          let lastError = '';
          await waitFor('the refusal to be recorded', async () => {
            lastError = (await findSession(db, d.partnerId))?.last_error ?? '';
            return /expecting \d+ but received/.test(lastError);
          });
          assert.match(lastError, /^logged out by the partner at logon: MsgSeqNum too low, expecting \d+ but received \d+$/);
          // The remedy: the number the executor expects.
          const expecting = Number(/expecting (\d+)/.exec(lastError)?.[1]);
          await db.updateTable('fix_sessions').set({ next_sender_seq: expecting }).where('partner_id', '=', d.partnerId).execute();
          await waitFor('the session to log on', async () => (await findSession(db, d.partnerId))?.state === 'logged_on', 20_000);
          assert.equal((await findSession(db, d.partnerId))?.last_error, null);
        });

        test('a logon to CompIDs the executor does not know: the operator reads that it hung up without answering', async (t) => {
          const executor = await startExecutor(t, nextPort++);
          const d = await fixDeployment(t, database, { port: executor.port, targetCompId: 'NOBODY' });
          const { runtime } = await d.start({ logon: false });
          await waitFor(
            'the refusal to be recorded',
            async () => (await findSession(runtime.storage.db, d.partnerId))?.last_error != null,
            20_000,
          );
          assert.equal(
            (await findSession(runtime.storage.db, d.partnerId))?.last_error,
            'the gateway closed the connection without answering the Logon',
          );
        });
      });
    }
  });
}

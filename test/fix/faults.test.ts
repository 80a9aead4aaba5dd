import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Runtime } from '../../src/app.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { fixDeployment, getOrder, orderWhen, placeOrder, sleep, waitFor } from '../support/fix-deployment.js';
import { startRawGateway, type RawGateway } from '../support/fix-gateway.js';
import { startFixProxy } from '../support/fix-proxy.js';
import { fixTime, type FixFrame } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import { startExecutor, type Executor, type FixMessage } from '../support/quickfix.js';

// Faults between the FIX connector and a gateway: QuickFIX's executor killed and restarted, messages
// lost on the network both ways (a proxy between the two drops or holds them), and, from a gateway
// written on the bytes, what QuickFIX never sends: malformed, unknown, garbled and duplicated
// messages, and reports for orders nobody sent. QuickFIX acceptors listen on every address, so the
// file runs again inside a network namespace that has only loopback.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX connector faults, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  let nextPort = 5200;

  const fromExecutor = (executor: Executor, msgType: string) =>
    executor.messages().filter((m) => m.direction === 'outgoing' && m.fields.get(35) === msgType);
  const toExecutor = (executor: Executor, msgType: string) =>
    executor.messages().filter((m) => m.direction === 'incoming' && m.fields.get(35) === msgType);
  const withClOrdId = <M extends FixMessage | FixFrame>(messages: M[], id: string) => messages.filter((m) => m.fields.get(11) === id);
  /** The executor's log arrives through a pipe, after the messages themselves. */
  const logged = (check: () => boolean) => waitFor("the executor's log", check, 5000);

  async function eventsOf(runtime: Runtime, orderId: string): Promise<string[]> {
    const rows = await runtime.storage.db.selectFrom('events').select('type').where('subject_ref', '=', orderId).orderBy('id').execute();
    return rows.map((r) => r.type);
  }

  async function fillsOf(runtime: Runtime, orderId: string): Promise<{ fill_qty: number; exchange_ref: string }[]> {
    return runtime.storage.db
      .selectFrom('order_fills')
      .select(['fill_qty', 'exchange_ref'])
      .where('order_id', '=', orderId)
      .orderBy('seq')
      .execute();
  }

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

  async function metric(base: string, pattern: RegExp): Promise<string | undefined> {
    return pattern.exec(await (await fetch(`${base}/metrics`)).text())?.[1];
  }

  /** A port nothing listens on (yet). */
  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  for (const database of DATABASES) {
    describe(`FIX connector faults on ${database.name}`, () => {
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
        await logged(() => withClOrdId(fromExecutor(executor, '8'), second).length === 2);
        const logons = toExecutor(executor, 'A');
        assert.equal(logons.at(-1)?.fields.get(141), 'N');
        const resendRequest = executor.messages().find((m) => m.direction === 'incoming' && m.fields.get(35) === '2');
        assert.equal(resendRequest?.fields.get(7), lostReport.fields.get(34), 'the service asked for the report it never got');
        const copy = withClOrdId(fromExecutor(executor, '8'), second)[1];
        assert.equal(copy?.fields.get(43), 'Y');
        assert.equal(copy?.fields.get(17), lostReport.fields.get(17));
        // Each order reached the executor once, and was filled once.
        for (const id of [first.id, second, third.id])
          assert.equal(withClOrdId(toExecutor(executor, 'D'), id).length, 1, `NewOrderSingle of ${id}`);
        for (const id of [first.id, second, third.id]) {
          assert.equal((await fillsOf(runtime, id)).length, 1, `fills of ${id}`);
          await waitFor('the fill event', async () => (await eventsOf(runtime, id)).includes('order.executed'));
          assert.deepEqual(await eventsOf(runtime, id), ['order.created', 'order.routed', 'order.executed']);
        }
        assert.equal(fromExecutor(executor, '3').length, 0, 'the executor rejected nothing');
        assert.equal(fromExecutor(executor, '5').length, 0, 'the executor logged nobody out');
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
        // b's report came beyond the gap and again as a resend: applied once.
        const bReports = proxy.messages.filter(
          (m) => m.direction === 'to_service' && m.fields.get(11) === b.id && m.fields.get(35) === '8',
        );
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
        await logged(() => fromExecutor(executor, '2').length === 1 && withClOrdId(toExecutor(executor, 'D'), cId).length === 1);
        assert.equal(fromExecutor(executor, '2')[0]?.fields.get(7), lost.fields.get(34), 'the executor asked for the order it never got');
        const resent = withClOrdId(toExecutor(executor, 'D'), cId)[0];
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
          assert.equal(withClOrdId(fromExecutor(executor, '8'), id).length, 1, `reports of ${id}`);
          assert.equal((await fillsOf(runtime, id)).length, 1);
        }
        assert.equal(fromExecutor(executor, '3').length, 0, 'the executor rejected nothing');
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

      test("the gateway's numbers went back (it reset without telling): the session ends and the operator reads why", async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI' });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime } = await d.start();
        for (let i = 0; i < 3; i++) gateway.send('0', []);
        await waitFor(
          'the heartbeats to be counted',
          async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === 5,
        );
        gateway.forgetNumbers();
        gateway.hangUp();
        await waitFor(
          'the session to end on it',
          async () => /below the 5 expected/.test((await findSession(runtime.storage.db, d.partnerId))?.last_error ?? ''),
          20_000,
        );
        const session = await findSession(runtime.storage.db, d.partnerId);
        assert.equal(session?.last_error, "MsgSeqNum 1 from the partner is below the 5 expected: the partner's numbers went back");
        assert.equal(session?.next_target_seq, 5, 'nothing taken from the gateway that went back');
      });

      test('bad input from the gateway: rejected at the session level (35=3) or ignored when garbled, counted, and never changes an order or ends the session', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api, base } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        await orderWhen(api, order.id, 'routed');
        const trade = (execId: string, qty: string | number, extra: [number, string | number][] = [], without: number[] = []) =>
          (
            [
              [37, 'GW-1'],
              [11, order.id],
              [17, execId],
              [150, 'F'],
              [39, '1'],
              [55, 'KOLA'],
              [54, '1'],
              [151, 0],
              [14, 0],
              [6, 0],
              [32, qty],
              [31, '15000'],
              ...extra,
            ] as [number, string | number][]
          ).filter(([tag]) => !without.includes(tag));

        const rejects: { seq: number; reason: string; tag?: string }[] = [];
        const expectReject = async (seq: number, reason: string, tag?: string) => {
          rejects.push({ seq, reason, ...(tag === undefined ? {} : { tag }) });
          await waitFor(
            `the Reject of ${seq}`,
            () => gateway.received.some((f) => f.fields.get(35) === '3' && f.fields.get(45) === String(seq)),
            5000,
          );
          const reject = gateway.received.find((f) => f.fields.get(35) === '3' && f.fields.get(45) === String(seq)) as FixFrame;
          assert.equal(reject.fields.get(373), reason, `SessionRejectReason of ${seq}: ${reject.text}`);
          if (tag !== undefined) assert.equal(reject.fields.get(371), tag, `RefTagID of ${seq}`);
        };
        await expectReject(gateway.send('ZZ', [[58, 'what is this']]), '11');
        await expectReject(gateway.send('8', trade('X-1', 2, [], [17])), '1', '17');
        await expectReject(gateway.send('8', trade('X-2', 2, [], [150])), '1', '150');
        await expectReject(gateway.send('8', trade('X-3', 2, [], [32])), '1', '32');
        await expectReject(gateway.send('8', trade('X-4', 'two')), '6', '32');
        await expectReject(gateway.send('8', trade('X-5', 2, [[60, 'yesterday']])), '6', '60');
        await expectReject(
          gateway.send(
            '8',
            trade('X-6', 2).map(([tag, value]) => [tag, tag === 150 ? 'Q' : value] as [number, string | number]),
          ),
          '5',
          '150',
        );
        // A report for an order this service never sent: logged and counted, nothing applied.
        gateway.send('8', [
          [37, 'GW-9'],
          [11, 'ord_nobody'],
          [17, 'X-7'],
          [150, 'F'],
          [39, '2'],
          [55, 'KOLA'],
          [54, '1'],
          [151, 0],
          [14, 2],
          [6, 15000],
          [32, 2],
          [31, '15000'],
        ]);
        // A garbled message (its checksum is wrong) is ignored; the next one shows the gap, and the
        // gateway's resend brings the report intact.
        const garbled = gateway.send('8', trade('G-1', 2), { checksum: '000' });
        await sleep(300);
        gateway.send('0', []);
        await waitFor('the order to show the resent fill', async () => (await fillsOf(runtime, order.id)).length === 1);
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 2, exchange_ref: 'G-1' }]);
        const resendRequest = gateway.received.find((f) => f.fields.get(35) === '2');
        assert.equal(resendRequest?.fields.get(7), String(garbled));

        assert.equal(gateway.connections(), 1, 'the session never ended');
        assert.ok(runtime.services.fix.runner(d.partnerId)?.session !== null);
        const current = await getOrder(api, order.id);
        assert.equal(current.status, 'partially_filled');
        assert.equal(current.filled_qty, 2);
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed', 'order.executed']);
        await waitFor(
          'every number committed',
          async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === gateway.nextSeq(),
        );
        const refused = (reason: string) =>
          metric(base, new RegExp(`cauri_fix_messages_refused_total\\{partner="${d.partnerId}",reason="${reason}"\\} (\\d+)`));
        assert.equal(await refused('session_reject'), String(rejects.length));
        assert.equal(await refused('garbled'), '1');
        assert.equal(await refused('unknown_order'), '1');
      });

      test('a report sent again (same ExecID, PossDup) under a new number or its own changes nothing', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        const fill = (execId: string, qty: number, cum: number): [number, string | number][] => [
          [37, 'GW-1'],
          [11, order.id],
          [17, execId],
          [150, 'F'],
          [39, cum === 10 ? '2' : '1'],
          [55, 'KOLA'],
          [54, '1'],
          [151, 10 - cum],
          [14, cum],
          [6, '15000'],
          [32, qty],
          [31, '15000'],
          [60, fixTime()],
        ];
        const firstFill = fill('F-1', 4, 4);
        const firstSeq = gateway.send('8', firstFill);
        await orderWhen(api, order.id, 'partially_filled');
        const log = () => runtime.services.fix.connector(d.partnerId).reports(null);
        const reportsBefore = (await log()).reports.length;
        const original = gateway.sent.find((f) => f.fields.get(34) === String(firstSeq)) as FixFrame;
        const possDup = { origSendingTime: original.fields.get(52) as string };
        gateway.send('8', firstFill, { possDup });
        gateway.send('8', firstFill, { seq: firstSeq, possDup });
        await waitFor(
          'the copies to be dealt with',
          async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === gateway.nextSeq(),
        );
        assert.equal((await log()).reports.length, reportsBefore, 'the copies added nothing to the report log');
        await sleep(500); // a few more report polls: nothing applies twice
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 4, exchange_ref: 'F-1' }]);
        assert.equal((await getOrder(api, order.id)).filled_qty, 4);
        gateway.send('8', fill('F-2', 6, 10));
        await orderWhen(api, order.id, 'filled');
        assert.deepEqual(await fillsOf(runtime, order.id), [
          { fill_qty: 4, exchange_ref: 'F-1' },
          { fill_qty: 6, exchange_ref: 'F-2' },
        ]);
        await waitFor('the fill event', async () => (await eventsOf(runtime, order.id)).filter((e) => e === 'order.executed').length === 2);
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed', 'order.executed', 'order.executed']);
        assert.equal(gateway.received.filter((f) => f.fields.get(35) === '3').length, 0, 'nothing was rejected');
      });
    });
  }

  /** The raw gateway acknowledges each NewOrderSingle with a New. */
  function acceptOrders(frame: FixFrame, gateway: RawGateway): void {
    if (frame.fields.get(35) !== 'D' || frame.fields.get(43) === 'Y') return;
    gateway.send('8', [
      [37, 'GW-1'],
      [11, frame.fields.get(11) ?? ''],
      [17, `NEW-${frame.fields.get(11)}`],
      [150, '0'],
      [39, '0'],
      [55, 'KOLA'],
      [54, '1'],
      [151, frame.fields.get(38) ?? '0'],
      [14, 0],
      [6, 0],
    ]);
  }
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { eventsOf, fillsOf, fixDeployment, getOrder, metric, orderWhen, placeOrder, sleep, waitFor } from '../support/fix-deployment.js';
import { acceptOrders, startRawGateway } from '../support/fix-gateway.js';
import { fixTime, type FixFrame } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// Faults from a gateway written on the bytes, of what QuickFIX never sends: numbers gone back,
// malformed, unknown, garbled and duplicated messages, and reports for orders nobody sent. The file
// runs inside a network namespace that has only loopback, as the other FIX tests do.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX connector faults from a gateway, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  for (const database of DATABASES) {
    describe(`FIX connector faults from a gateway on ${database.name}`, () => {
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
        // As FIX asks, the gateway is told why before the connection ends.
        await waitFor('the Logout that says why', () => gateway.received.some((f) => f.fields.get(35) === '5'), 5000);
        const logout = gateway.received.find((f) => f.fields.get(35) === '5');
        assert.equal(logout?.fields.get(58), 'MsgSeqNum too low, expecting 5 but received 1', logout?.text);
      });

      test('a message of another session (wrong SenderCompID): a Reject 373=9, a Logout that says why, nothing taken; the next logon asks for it again', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        await orderWhen(api, order.id, 'routed');
        const foreign = gateway.send(
          '8',
          [
            [37, 'GW-1'],
            [11, order.id],
            [17, 'F-1'],
            [150, 'F'],
            [39, '2'],
            [55, 'KOLA'],
            [54, '1'],
            [151, 0],
            [14, 10],
            [6, '15000'],
            [32, 10],
            [31, '15000'],
          ],
          { senderCompId: 'OTHER' },
        );
        await waitFor('the Logout', () => gateway.received.some((f) => f.fields.get(35) === '5'), 5000);
        const reject = gateway.received.find((f) => f.fields.get(35) === '3' && f.fields.get(45) === String(foreign));
        assert.deepEqual([reject?.fields.get(373), reject?.fields.get(371)], ['9', '49'], reject?.text);
        assert.equal(gateway.received.find((f) => f.fields.get(35) === '5')?.fields.get(58), 'CompID problem');
        await waitFor('the session to say why it ended', async () =>
          /another session.*SenderCompID \(49\) 'OTHER'/.test((await findSession(runtime.storage.db, d.partnerId))?.last_error ?? ''),
        );
        await waitFor('the next logon', () => gateway.connections() === 2, 20_000);
        await waitFor('the next logon to ask for the message again', () =>
          gateway.received.some((f) => f.fields.get(35) === '2' && f.fields.get(7) === String(foreign)),
        );
        // Nothing of it was taken (cauri asked for its number again); the gateway's resend, under the
        // session's own CompIDs, is applied once.
        await orderWhen(api, order.id, 'filled');
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 10, fill_price_cents: 1_500_000, exchange_ref: 'F-1' }]);
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
        // A Trade that cannot be a fill: a price under half a cent (0 cents once rounded), no shares.
        await expectReject(
          gateway.send(
            '8',
            trade('X-8', 2).map(([tag, value]) => [tag, tag === 31 ? '0.004' : value] as [number, string | number]),
          ),
          '5',
          '31',
        );
        await expectReject(gateway.send('8', trade('X-9', 0)), '5', '32');
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
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 2, fill_price_cents: 1_500_000, exchange_ref: 'G-1' }]);
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
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 4, fill_price_cents: 1_500_000, exchange_ref: 'F-1' }]);
        assert.equal((await getOrder(api, order.id)).filled_qty, 4);
        gateway.send('8', fill('F-2', 6, 10));
        await orderWhen(api, order.id, 'filled');
        assert.deepEqual(await fillsOf(runtime, order.id), [
          { fill_qty: 4, fill_price_cents: 1_500_000, exchange_ref: 'F-1' },
          { fill_qty: 6, fill_price_cents: 1_500_000, exchange_ref: 'F-2' },
        ]);
        await waitFor('the fill event', async () => (await eventsOf(runtime, order.id)).filter((e) => e === 'order.executed').length === 2);
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed', 'order.executed', 'order.executed']);
        assert.equal(gateway.received.filter((f) => f.fields.get(35) === '3').length, 0, 'nothing was rejected');
      });
    });
  }
}

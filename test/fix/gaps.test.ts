import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { eventsOf, fillsOf, fixDeployment, getOrder, metric, orderWhen, placeOrder, waitFor } from '../support/fix-deployment.js';
import { acceptOrders, startRawGateway, type RawGateway } from '../support/fix-gateway.js';
import { fixTime } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// Gaps in what the gateway sends: a message that arrives beyond a gap waits for the gap to be filled
// and is applied in sequence order, so a Canceled never closes an order before the Trade it follows.
// The file runs inside a network namespace that has only loopback, as the other FIX tests do.

/** A Trade of 4 at 15000 garbled on the wire (cauri must ask for it again), then the SGI's Canceled of the other 6. */
function tradeLostThenCanceled(gateway: RawGateway, orderId: string): { trade: number; canceled: number } {
  const base: [number, string | number][] = [
    [37, 'GW-1'],
    [11, orderId],
    [55, 'KOLA'],
    [54, '1'],
  ];
  const trade = gateway.send(
    '8',
    [...base, [17, 'T-1'], [150, 'F'], [39, '1'], [151, 6], [14, 4], [6, '15000'], [32, 4], [31, '15000'], [60, fixTime()]],
    { checksum: '000' },
  );
  const canceled = gateway.send('8', [...base, [17, 'C-1'], [150, '4'], [39, '4'], [151, 0], [14, 4], [6, '15000'], [60, fixTime()]]);
  return { trade, canceled };
}

if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX gaps from a gateway, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  for (const database of DATABASES) {
    describe(`FIX gaps on ${database.name}`, () => {
      test('a Trade lost in a gap, then a Canceled: the Canceled waits for the resent Trade, and the order keeps its fill', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        await orderWhen(api, order.id, 'routed');
        const { trade } = tradeLostThenCanceled(gateway, order.id);
        const done = await orderWhen(api, order.id, 'cancelled');
        assert.equal(done.filled_qty, 4, 'the Trade the SGI executed is a fill');
        assert.deepEqual(await fillsOf(runtime, order.id), [{ fill_qty: 4, fill_price_cents: 1_500_000, exchange_ref: 'T-1' }]);
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed', 'order.executed', 'order.cancelled']);
        const resendRequest = gateway.received.find((f) => f.fields.get(35) === '2');
        assert.equal(resendRequest?.fields.get(7), String(trade), 'cauri asked for the garbled Trade');
        await waitFor(
          'every number committed',
          async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === gateway.nextSeq(),
        );
        // The Trade sent once more (PossDup, its own number) changes nothing.
        const stored = gateway.sent.find((f) => f.fields.get(17) === 'T-1');
        assert.ok(stored !== undefined);
        gateway.send(
          '8',
          [...stored.fields.entries()].filter(([tag]) => ![8, 9, 10, 34, 35, 49, 52, 56].includes(tag)).map(([tag, v]) => [tag, v]),
          { seq: trade, possDup: { origSendingTime: fixTime() } },
        );
        gateway.send('0', []);
        await waitFor(
          'the copy to be dealt with',
          async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq === gateway.nextSeq(),
        );
        assert.equal((await getOrder(api, order.id)).filled_qty, 4);
        assert.equal((await fillsOf(runtime, order.id)).length, 1);
      });

      test('a gap the gateway never fills: asked for again, then the connection is dropped and the next logon asks again; nothing is applied past the gap', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port, heartbeatS: 5 });
        const { runtime, api, base } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        await orderWhen(api, order.id, 'routed');
        gateway.answerResends(false);
        const { trade } = tradeLostThenCanceled(gateway, order.id);
        await waitFor(
          'the session to end on the gap',
          async () => /did not resend messages/.test((await findSession(runtime.storage.db, d.partnerId))?.last_error ?? ''),
          30_000,
        );
        const asked = gateway.received.filter((f) => f.fields.get(35) === '2' && f.fields.get(7) === String(trade));
        assert.ok(asked.length >= 2, `the gap was asked for again (${asked.length} ResendRequests)`);
        const counted = await metric(base, new RegExp(`cauri_fix_resend_requests_total\\{partner="${d.partnerId}",from="cauri"\\} (\\d+)`));
        assert.ok(Number(counted) >= 2, `cauri's ResendRequests are counted: ${counted}`);
        assert.equal((await findSession(runtime.storage.db, d.partnerId))?.next_target_seq, trade, 'nothing committed past the gap');
        const waiting = await getOrder(api, order.id);
        assert.equal(waiting.status, 'routed', 'the Canceled after the gap was not applied');
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed']);

        // The next logon asks from the gap on, and the gateway still does not answer. Only the Logon
        // and Heartbeats come past the gap now, nothing is held, and cauri asks again all the same:
        // once the gateway answers, both reports apply in order.
        await waitFor('the next logon to ask for the gap', () => {
          const logons = gateway.received.flatMap((f, i) => (f.fields.get(35) === 'A' ? [i] : []));
          return logons.length >= 2 && gateway.received.slice(logons[1]).some((f) => f.fields.get(35) === '2');
        });
        const unanswered = gateway.received.length;
        gateway.answerResends(true);
        await waitFor(
          'cauri to ask again though nothing is held',
          () => gateway.received.slice(unanswered).some((f) => f.fields.get(35) === '2'),
          30_000,
        );
        const done = await orderWhen(api, order.id, 'cancelled', 60_000);
        assert.equal(done.filled_qty, 4);
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.routed', 'order.executed', 'order.cancelled']);
        assert.ok(gateway.connections() >= 2, 'the connection was dropped and made again');
      });
    });
  }
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { DATABASES } from '../support/harness.js';
import { eventsOf, fixDeployment, getOrder, orderWhen, placeOrder, waitFor } from '../support/fix-deployment.js';
import { startRawGateway } from '../support/fix-gateway.js';
import { fixTime } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// An OrderCancelReject (35=9) refuses the cancel or the amend it answers, and nothing else: the order
// stays as its ExecutionReports make it. The file runs inside a network namespace that has only
// loopback, as the other FIX tests do.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX OrderCancelReject from a gateway, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  for (const database of DATABASES) {
    describe(`FIX OrderCancelReject on ${database.name}`, () => {
      test('a cancel refused as "unknown order" before the SGI acknowledged the order: the order stays, the refusal shows, the New routes it', async (t) => {
        // The gateway takes the NewOrderSingle without answering yet, and refuses the cancel with
        // CxlRejReason 1 (unknown order), as a gateway whose order entry is slower than its cancel desk may.
        const gateway = await startRawGateway(t, {
          senderCompId: 'EXEC',
          targetCompId: 'CAURI',
          onApplication: (frame, gw) => {
            if (frame.fields.get(35) !== 'F' || frame.fields.get(43) === 'Y') return;
            gw.send('9', [
              [37, 'NONE'],
              [11, frame.fields.get(11) ?? ''],
              [41, frame.fields.get(41) ?? ''],
              [39, '8'],
              [434, '1'],
              [102, 1],
              [58, 'Unknown order'],
            ]);
          },
        });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        assert.equal(order.status, 'created', 'the SGI has not answered the order');
        const newOrder = gateway.received.find((f) => f.fields.get(35) === 'D' && f.fields.get(11) === order.id);
        assert.ok(newOrder !== undefined, 'the NewOrderSingle went out');

        const res = await api.post(`/v1/orders/${order.id}/cancel`, undefined);
        assert.ok(res.status === 200 || res.status === 202, `cancel answered ${res.status}`);
        await waitFor('the refusal to show on the order', async () => (await getOrder(api, order.id)).last_refusal != null);
        const refused = await getOrder(api, order.id);
        assert.equal(refused.status, 'created', 'the refusal did not cancel the order');
        assert.equal(refused.pending_request ?? null, null);
        assert.deepEqual(
          { request: refused.last_refusal.request, reason: refused.last_refusal.reason },
          { request: 'cancel', reason: 'partner_refused' },
        );
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.request_refused']);

        // The SGI then acknowledges the order: it is routed, as its reports make it.
        gateway.send('8', [
          [37, 'GW-1'],
          [11, order.id],
          [17, `NEW-${order.id}`],
          [150, '0'],
          [39, '0'],
          [55, 'KOLA'],
          [54, '1'],
          [151, 10],
          [14, 0],
          [6, 0],
          [60, fixTime()],
        ]);
        const routed = await orderWhen(api, order.id, 'routed');
        assert.equal(routed.last_refusal.reason, 'partner_refused');
        assert.deepEqual(await eventsOf(runtime, order.id), ['order.created', 'order.request_refused', 'order.routed']);
        assert.equal(
          gateway.received.filter((f) => f.fields.get(35) === 'D' && f.fields.get(43) !== 'Y').length,
          1,
          'the order went out once',
        );
      });
    });
  }
}

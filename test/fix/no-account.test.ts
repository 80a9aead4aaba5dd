import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { DATABASES } from '../support/harness.js';
import { fixDeployment, orderWhen, placeOrder, waitFor } from '../support/fix-deployment.js';
import { startRawGateway } from '../support/fix-gateway.js';
import { fixTime } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// A FIX partner without a default account (`fix.account` null), for an investor with no account
// registered there: the order is accepted and its NewOrderSingle carries no Account (1); the SGI's
// refusal of it is a rejection like any other. The file runs inside a network namespace that has
// only loopback, as the other FIX tests do.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX orders without an account, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  for (const database of DATABASES) {
    describe(`FIX orders without an account on ${database.name}`, () => {
      test('accepted, sent without Account (1); the SGI refusing it fails the order', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI' });
        const d = await fixDeployment(t, database, { port: gateway.port }, { partner: { fix: { account: null } } });
        const { api } = await d.start();
        const order = await placeOrder(api, d.partnerId);
        assert.equal(order.status, 'created');
        await waitFor('the NewOrderSingle', () => gateway.received.some((f) => f.fields.get(35) === 'D'));
        const sent = gateway.received.find((f) => f.fields.get(35) === 'D' && f.fields.get(11) === order.id);
        assert.ok(sent !== undefined);
        assert.equal(sent.fields.has(1), false, `no Account (1): ${sent.text}`);

        gateway.send('8', [
          [37, 'NONE'],
          [11, order.id],
          [17, `REJ-${order.id}`],
          [150, '8'],
          [39, '8'],
          [55, 'KOLA'],
          [54, '1'],
          [151, 0],
          [14, 0],
          [6, 0],
          [103, 99],
          [58, 'Account required'],
          [60, fixTime()],
        ]);
        const failed = await orderWhen(api, order.id, 'failed');
        assert.equal(failed.failure_reason, 'sgi_rejected');
      });
    });
  }
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/app.js';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES, type DatabaseCase } from '../support/harness.js';
import {
  FIX_PASSWORD,
  executorDeployment,
  logged,
  orderSentNotDelivered,
  orderWhen,
  placeOrder,
  received,
  sample,
  sent,
  waitFor,
} from '../support/executor-deployment.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// What operators see of a real FIX session with QuickFIX's executor: the counters on /metrics and
// the FIX messages in the logs. The executor listens on every address, so the tests run inside a
// network namespace that has only loopback.
if (!IN_LOOPBACK_NAMESPACE) {
  test("FIX metrics and logs of real sessions with QuickFIX's executor, in a loopback-only network namespace", async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  const database = DATABASES[0] as DatabaseCase;

  describe('FIX sessions on /metrics and in the logs', () => {
    test('messages, rejects and logons are counted per partner as the executor saw them; the logs show every message with the password masked', async (t) => {
      const d = await executorDeployment(t, database, 5300, { logs: true });
      const { runtime, api, base } = await d.start();
      const filled = await placeOrder(api, d.partnerId, { limit_price_cents: 1_500_000 });
      await orderWhen(api, filled.id, 'filled');
      // The stock executor refuses market orders with a session-level Reject.
      const refused = await placeOrder(api, d.partnerId, { limit_price_cents: undefined });
      assert.equal(refused.status, 'failed');
      await logged(() => sent(d.executor, '8').length === 1 && sent(d.executor, '3').length === 1);

      const metrics = await (await fetch(`${base}/metrics`)).text();
      const partner = d.partnerId;
      const messages = (direction: string, msgType: string) =>
        sample(metrics, 'cauri_fix_messages_total', { partner, direction, msg_type: msgType });
      // What cauri counts is what the executor logged, message type by message type.
      for (const msgType of ['A', 'D']) assert.equal(messages('sent', msgType), received(d.executor, msgType).length, `sent ${msgType}`);
      for (const msgType of ['A', '8', '3'])
        assert.equal(messages('received', msgType), sent(d.executor, msgType).length, `received ${msgType}`);
      assert.equal(messages('sent', 'D'), 2);
      assert.equal(sample(metrics, 'cauri_fix_rejects_total', { partner, direction: 'received', kind: 'session' }), 1);
      assert.equal(sample(metrics, 'cauri_fix_rejects_total', { partner, direction: 'received', kind: 'order' }), 0);
      assert.equal(sample(metrics, 'cauri_fix_logons_total', { partner }), 1);
      assert.equal(sample(metrics, 'cauri_fix_session_logged_on', { partner }), 1);
      assert.equal(sample(metrics, 'cauri_fix_resend_requests_total', { partner, from: 'partner' }), 0);
      assert.match(metrics, /# TYPE cauri_fix_resent_messages_total counter/);

      // The logs: each message once each way, with the partner, the password masked everywhere.
      await runtime.close();
      const all = d.logs.join('\n');
      assert.ok(!all.includes(FIX_PASSWORD), 'the password appears nowhere in the logs, at trace level');
      const fixLines = d.logs
        .map((l) => JSON.parse(l) as Record<string, any>)
        .filter((l) => l.msg === 'FIX message sent' || l.msg === 'FIX message received');
      const logon = fixLines.find((l) => l.msg === 'FIX message sent' && l.msg_type === 'A');
      assert.ok(logon !== undefined, 'the Logon sent is logged');
      assert.equal(logon.partner_id, partner);
      assert.match(logon.fix, /\|553=cauri-user\|554=\*\*\*\|/);
      const order = fixLines.find((l) => l.msg === 'FIX message sent' && l.msg_type === 'D' && l.fix.includes(`|11=${filled.id}|`));
      assert.ok(order !== undefined, 'the order sent is logged');
      assert.ok(
        fixLines.some((l) => l.msg === 'FIX message received' && l.msg_type === '8' && l.fix.includes(`|11=${filled.id}|`)),
        'the execution report received is logged',
      );
      assert.equal(fixLines.filter((l) => l.msg === 'FIX message sent' && l.msg_type === 'D').length, 2);
    });

    test('resends are counted both ways: a ResendRequest of the executor answered from the store, and one of cauri for a gap', async (t) => {
      const d = await executorDeployment(t, database, 5301);
      const first = await d.start();
      const order = await placeOrder(first.api, d.partnerId, { limit_price_cents: 1_500_000 });
      await orderWhen(first.api, order.id, 'filled');
      await first.runtime.close();

      // A crash after an order was committed as sent and before its bytes left: the executor will ask for it.
      const at = Date.now() - 2000;
      const { orderId } = await orderSentNotDelivered(d, first.api.clientId, at);
      const second = await d.start();
      // The first process's lease on reading the partner's report log runs out within 30 s; the test does not wait for it.
      await second.runtime.storage.transact((trx) => trx.updateTable('connector_positions').set({ lease_until: 0 }).execute());
      await waitFor(
        'the lost order to be filled',
        async () =>
          (await second.runtime.storage.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirst())?.status ===
          'filled',
      );
      let metrics = await (await fetch(`${second.base}/metrics`)).text();
      const partner = d.partnerId;
      assert.equal(sample(metrics, 'cauri_fix_resend_requests_total', { partner, from: 'partner' }), sent(d.executor, '2').length);
      assert.equal(sample(metrics, 'cauri_fix_resend_requests_total', { partner, from: 'partner' }), 1);
      assert.equal(sample(metrics, 'cauri_fix_resent_messages_total', { partner, kind: 'application' }), 1);
      assert.equal(received(d.executor, 'D').filter((m) => m.fields.get(11) === orderId && m.fields.get(43) === 'Y').length, 1);
      assert.equal(sample(metrics, 'cauri_fix_resend_requests_total', { partner, from: 'cauri' }), 0);
      await second.runtime.close();

      // cauri forgets the executor's last messages: its next Logon finds a gap and asks for them.
      const again = await openDatabase(d.env.config, d.env.options);
      try {
        await again.transact(async (trx) => {
          const next = (await findSession(trx, d.partnerId))?.next_target_seq ?? 0;
          await trx
            .updateTable('fix_sessions')
            .set({ next_target_seq: next - 2 })
            .where('partner_id', '=', d.partnerId)
            .execute();
        });
      } finally {
        await again.close();
      }
      const requestsBefore = received(d.executor, '2').length;
      const third = await d.start();
      await logged(() => received(d.executor, '2').length === requestsBefore + 1);
      metrics = await (await fetch(`${third.base}/metrics`)).text();
      assert.equal(sample(metrics, 'cauri_fix_resend_requests_total', { partner, from: 'cauri' }), 1);
      assert.equal(sample(metrics, 'cauri_fix_messages_total', { partner, direction: 'sent', msg_type: '2' }), 1);
      assert.equal(sample(metrics, 'cauri_fix_logons_total', { partner }), 1, 'each process counts its own');
    });
  });
}

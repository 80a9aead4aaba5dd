import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { newId } from '../../src/lib/ids.js';
import { DATABASES } from '../support/harness.js';
import { executorDeployment, logged, received, sent } from '../support/executor-deployment.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// Orders handed over at the same moment share the commits of the FIX session, against QuickFIX's
// executor in a network namespace that has only loopback (it listens on every address).
if (!IN_LOOPBACK_NAMESPACE) {
  test("FIX orders handed over together, against QuickFIX's executor in a loopback-only network namespace", async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  let nextPort = 5500;
  for (const database of DATABASES) {
    describe(`orders handed over together on ${database.name}`, () => {
      test('are committed as sent together, go out in order under consecutive numbers, and are each answered once', async (t) => {
        const d = await executorDeployment(t, database, nextPort++);
        const { runtime } = await d.start();
        const connector = runtime.services.fix.connector(d.partnerId);
        const ids = Array.from({ length: 30 }, () => newId('order'));
        const results = await Promise.all(
          ids.map((orderId, i) =>
            connector.submit({
              order_id: orderId,
              instrument: 'KOLA.BRVM',
              instrument_status: 'active',
              side: 'buy',
              qty: 1 + i,
              limit_price_cents: 1_500_000,
              reference_price_cents: 1_500_000,
              time_in_force: 'day',
              expire_date: null,
            }),
          ),
        );
        assert.deepEqual(
          results.map((r) => r.status),
          ids.map(() => 'accepted'),
        );

        const stored = await runtime.storage.db
          .selectFrom('fix_messages')
          .select(['seq', 'cl_ord_id', 'sending_time'])
          .where('partner_id', '=', d.partnerId)
          .where('msg_type', '=', 'D')
          .orderBy('seq')
          .execute();
        assert.equal(stored.length, 30);
        assert.deepEqual(new Set(stored.map((m) => m.cl_ord_id)), new Set(ids));
        // Several were committed in one transaction: they carry the same SendingTime.
        assert.ok(new Set(stored.map((m) => Number(m.sending_time))).size < 30, 'some orders were committed together');
        await logged(() => received(d.executor, 'D').length === 30 && sent(d.executor, '8').length === 30);
        // On the wire, in the order of their numbers, each number once and none missing: no ResendRequest.
        const wire = received(d.executor, 'D').map((m) => ({ seq: Number(m.fields.get(34)), id: m.fields.get(11) }));
        assert.deepEqual(
          wire,
          stored.map((m) => ({ seq: Number(m.seq), id: m.cl_ord_id })),
        );
        for (let i = 1; i < wire.length; i++) assert.equal(wire[i]?.seq, (wire[i - 1]?.seq ?? 0) + 1);
        assert.equal(sent(d.executor, '2').length, 0);
        assert.equal(sent(d.executor, '3').length, 0);
        // Every answer applied once, in the report log.
        const reports = (await connector.reports(null)).reports;
        assert.equal(reports.filter((r) => r.type === 'fill').length, 30);
        assert.deepEqual(new Set(reports.filter((r) => r.type === 'fill').map((r) => r.order_id)), new Set(ids));
      });
    });
  }
}

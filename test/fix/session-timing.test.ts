import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES, type DatabaseCase } from '../support/harness.js';
import { executorDeployment, logged, orderWhen, placeOrder, received, sample, sent, waitFor } from '../support/executor-deployment.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// Heartbeats, TestRequests, reconnection and the daily session window, against QuickFIX's executor in
// a network namespace that has only loopback (it listens on every address).
if (!IN_LOOPBACK_NAMESPACE) {
  test("FIX heartbeats, reconnection and session windows against QuickFIX's executor, in a loopback-only network namespace", async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  let nextPort = 5400;

  /** `HH:MM:SS` (UTC) of `ms` from now. */
  const utcIn = (ms: number) => new Date(Date.now() + ms).toISOString().slice(11, 19);

  // The three suites run side by side: each has its own executor, ports and service, and they spend
  // their time waiting (for heartbeats, silences and the windows' times).
  describe('heartbeats beside session windows', { concurrency: true }, () => {
    describe('heartbeats and reconnection', () => {
      test('both sides heartbeat at HeartBtInt; a silent gateway gets a TestRequest, and the session survives its answer; a gateway silent for long is dropped and logged on again', async (t) => {
        const d = await executorDeployment(t, DATABASES[0] as DatabaseCase, nextPort++, { fix: { heartbeat_s: 5 } });
        const { runtime, base } = await d.start();
        const partner = d.partnerId;
        assert.equal(received(d.executor, 'A')[0]?.fields.get(108), '5');
        const metric = async (name: string, labels: Record<string, string>) =>
          sample(await (await fetch(`${base}/metrics`)).text(), name, { partner, ...labels });
        await waitFor('a heartbeat each way', () => received(d.executor, '0').length >= 1 && sent(d.executor, '0').length >= 1, 15_000);

        // Frozen, the executor answers nothing: 1.5 HeartBtInt of silence and cauri asks with a TestRequest.
        d.executor.pause();
        await waitFor(
          'a TestRequest from cauri',
          async () => (await metric('cauri_fix_messages_total', { direction: 'sent', msg_type: '1' })) === 1,
          15_000,
        );
        d.executor.resume();
        await logged(() => received(d.executor, '1').length === 1);
        const testReqId = received(d.executor, '1')[0]?.fields.get(112);
        assert.ok(testReqId !== undefined && testReqId !== '');
        await logged(() => sent(d.executor, '0').some((m) => m.fields.get(112) === testReqId));
        await waitFor(
          'the answer to be read',
          async () => (await metric('cauri_fix_messages_total', { direction: 'received', msg_type: '0' })) >= 1,
        );
        assert.ok(runtime.services.fix.runner(partner)?.session != null, 'the session is still up');
        assert.equal(await metric('cauri_fix_logons_total', {}), 1);

        // Silent for 2.5 HeartBtInt: cauri drops the connection, and logs on again once the executor answers.
        d.executor.pause();
        await waitFor('cauri to drop the connection', () => runtime.services.fix.runner(partner)?.session == null, 20_000);
        // The stored state follows the connection's end (written after it, not with it).
        await waitFor(
          'the stored session to show it',
          async () => (await findSession(runtime.storage.db, partner))?.state !== 'logged_on',
          10_000,
        );
        d.executor.resume();
        await waitFor('the session to log on again', () => runtime.services.fix.runner(partner)?.session != null, 40_000);
        assert.equal(await metric('cauri_fix_logons_total', {}), 2);
        assert.equal(await metric('cauri_fix_session_logged_on', {}), 1);
        await logged(() => sent(d.executor, 'A').length === 2);
        const logons = received(d.executor, 'A');
        assert.ok(Number(logons.at(-1)?.fields.get(34)) > Number(logons[0]?.fields.get(34)), 'the numbers go on: no reset at logon');
        assert.equal(logons.at(-1)?.fields.get(141), 'N');
        assert.equal((await findSession(runtime.storage.db, partner))?.state, 'logged_on');
      });
    });

    describe('daily session windows', () => {
      for (const database of DATABASES) {
        describe(`daily session window on ${database.name}`, () => {
          test('outside the window there is no logon and orders wait created; at its start the session logs on and they are handed over; at its end cauri logs out', async (t) => {
            // A window that opens in 30 s (time for the service to start and see it is outside, on a machine
            // busy with other tests and this file's other suites) and lasts 14 s.
            const opensIn = 30_000;
            const opensAt = Date.now() + opensIn - ((Date.now() + opensIn) % 1000);
            const d = await executorDeployment(t, database, nextPort++, {
              fix: { start_time: utcIn(opensIn), end_time: utcIn(opensIn + 14_000) },
              waitForLogon: false,
            });
            const { runtime, api } = await d.start();
            const partner = d.partnerId;
            await waitFor(
              'the session to be outside its window',
              async () => (await findSession(runtime.storage.db, partner))?.state === 'outside_window',
              60_000,
            );
            const early = await placeOrder(api, partner, { limit_price_cents: 1_500_000 });
            assert.equal(early.status, 'created', 'no session: the order waits');
            assert.equal(received(d.executor, 'A').length, 0);
            assert.ok(Date.now() < opensAt, 'this was before the window opened');

            await orderWhen(api, early.id, 'filled', 30_000);
            const logon = received(d.executor, 'A')[0];
            assert.ok(logon !== undefined);
            const routedAt = await runtime.storage.db
              .selectFrom('events')
              .select('created_at')
              .where('subject_ref', '=', early.id)
              .where('type', '=', 'order.routed')
              .executeTakeFirstOrThrow();
            assert.ok(Number(routedAt.created_at) >= opensAt, 'handed over once the window opened');
            assert.equal(logon.fields.get(34), '1', 'a window starts its numbers at 1');
            const during = await placeOrder(api, partner, { limit_price_cents: 1_500_000 });
            assert.equal(during.status, 'routed');

            // At the window's end cauri logs out, and stays out.
            await waitFor('the Logout at the end of the window', () => received(d.executor, '5').length === 1, 40_000);
            await waitFor(
              'the session to be outside its window again',
              async () => (await findSession(runtime.storage.db, partner))?.state === 'outside_window',
            );
            assert.equal(runtime.services.fix.runner(partner)?.session, null);
            const late = await placeOrder(api, partner, { limit_price_cents: 1_500_000 });
            assert.equal(late.status, 'created');
            assert.equal(received(d.executor, 'D').filter((m) => m.fields.get(11) === late.id).length, 0);
            assert.equal(received(d.executor, 'A').length, 1);
          });
        });
      }
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { fixDeployment, orderWhen, placeOrder, sleep, waitFor } from '../support/fix-deployment.js';
import { acceptOrders, startRawGateway } from '../support/fix-gateway.js';
import { fixTime, type FixFrame } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';

// SequenceResets from the gateway, as FIX 4.4 has them: one that would lower the number cauri
// expects is refused with a Reject and changes nothing, and the gap before a gap fill is asked for at
// once. The file runs inside a network namespace that has only loopback, as the other FIX tests do.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX SequenceReset from a gateway, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  for (const database of DATABASES) {
    describe(`FIX SequenceReset on ${database.name}`, () => {
      test('a reset that lowers the number is refused, a stale gap fill moves nothing back, a gap before a gap fill is asked for at once', async (t) => {
        const gateway = await startRawGateway(t, { senderCompId: 'EXEC', targetCompId: 'CAURI', onApplication: acceptOrders });
        const d = await fixDeployment(t, database, { port: gateway.port });
        const { runtime, api } = await d.start();
        const committed = async () => (await findSession(runtime.storage.db, d.partnerId))?.next_target_seq;
        const caughtUp = (what: string) => waitFor(what, async () => (await committed()) === gateway.nextSeq());
        const resendRequests = () => gateway.received.filter((f) => f.fields.get(35) === '2');
        const rejectOf = (seq: number) =>
          gateway.received.find((f) => f.fields.get(35) === '3' && f.fields.get(45) === String(seq)) as FixFrame | undefined;
        for (let i = 0; i < 3; i++) gateway.send('0', []);
        await caughtUp('the heartbeats to be committed');

        // SequenceReset-Reset to 2 while 5 is expected: refused (373=5 on NewSeqNo), numbers kept.
        const expected = gateway.nextSeq();
        gateway.send('4', [[36, 2]], { seq: expected });
        await waitFor('the Reject of the reset', () => rejectOf(expected) !== undefined, 5000);
        assert.deepEqual(
          [rejectOf(expected)?.fields.get(372), rejectOf(expected)?.fields.get(373), rejectOf(expected)?.fields.get(371)],
          ['4', '5', '36'],
          rejectOf(expected)?.text,
        );
        gateway.send('0', []);
        await caughtUp('the next heartbeat to be committed');

        // A copy of an old gap fill (PossDup, numbers 2 to 2): nothing moves back.
        gateway.send(
          '4',
          [
            [123, 'Y'],
            [36, 3],
          ],
          { seq: 2, possDup: { origSendingTime: fixTime() } },
        );
        gateway.send('0', []);
        await caughtUp('the heartbeat after the stale gap fill');

        // A gap fill whose NewSeqNo is not above its own number: refused.
        const own = gateway.nextSeq();
        gateway.send('4', [
          [123, 'Y'],
          [36, own],
        ]);
        await waitFor('the Reject of the gap fill', () => rejectOf(own)?.fields.get(371) === '36', 5000);
        assert.equal(resendRequests().length, 0, 'no number was lowered: nothing was asked for again');

        // A message lost on the wire (garbled), then a gap fill numbered after it: what is missing (the
        // refused gap fill's number, which a Reject of a SequenceReset does not take, and the lost
        // message) is asked for at once, not after heartbeat_s (30 s here).
        const lost = gateway.send('0', [], { checksum: '000' });
        gateway.send('4', [
          [123, 'Y'],
          [36, lost + 2],
        ]);
        await waitFor(
          'a ResendRequest for the missing messages',
          () => resendRequests().some((f) => f.fields.get(7) === String(own) && f.fields.get(16) === String(lost)),
          3000,
        );
        await caughtUp('the gap to be filled');

        const order = await placeOrder(api, d.partnerId);
        await orderWhen(api, order.id, 'routed');
        await sleep(200);
        assert.equal(gateway.connections(), 1, 'the session never ended');
      });
    });
  }
}

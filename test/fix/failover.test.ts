import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { findSession } from '../../src/routing/fix/fix.repository.js';
import { DATABASES } from '../support/harness.js';
import { apiAt, orderWhen, placeOrder, processDeployment, waitFor, type ProcessDeployment } from '../support/fix-deployment.js';
import { startFixProxy } from '../support/fix-proxy.js';
import type { FixFrame } from '../support/fix-wire.js';
import { IN_LOOPBACK_NAMESPACE, runInLoopbackNamespace } from '../support/loopback.js';
import { spawnService, type SpawnedProcess } from '../support/process.js';
import { startExecutor, type Executor, type FixMessage } from '../support/quickfix.js';

// The service's process killed (SIGKILL) around the hand-over of an order, and a second process
// taking a partner's session over from one killed while holding it. The processes are real
// (`cauri serve`), against QuickFIX's executor; when to kill is read off the database and the wire
// (a proxy between the service and the executor holds the messages in flight). The file runs again
// inside a network namespace that has only loopback, as QuickFIX acceptors listen on every address.
if (!IN_LOOPBACK_NAMESPACE) {
  test('FIX connector: service processes killed, in a loopback-only network namespace', async (t) => {
    await runInLoopbackNamespace(t, fileURLToPath(import.meta.url));
  });
} else {
  let nextPort = 5300;

  const fromExecutor = (executor: Executor, msgType: string, id: string) =>
    executor.messages().filter((m) => m.direction === 'outgoing' && m.fields.get(35) === msgType && m.fields.get(11) === id);
  const toExecutor = (executor: Executor, msgType: string, id?: string) =>
    executor
      .messages()
      .filter((m) => m.direction === 'incoming' && m.fields.get(35) === msgType && (id === undefined || m.fields.get(11) === id));
  const logged = (check: () => boolean) => waitFor("the executor's log", check, 5000);

  /** SIGKILL: nothing of the process runs after it, as in a crash. */
  async function kill(service: SpawnedProcess): Promise<void> {
    process.kill(service.pid, 'SIGKILL');
    await service.stop();
  }

  /** The session is logged on (by `owner`, after `since`). */
  async function loggedOn(d: ProcessDeployment, owner?: SpawnedProcess, since = 0): Promise<boolean> {
    const session = await findSession(d.storage.db, d.partnerId);
    return (
      session?.state === 'logged_on' &&
      (session.last_logon_at ?? 0) >= since &&
      (owner === undefined || session.lease_owner?.startsWith(`${owner.pid}-`) === true)
    );
  }

  async function orderFacts(d: ProcessDeployment, id: string) {
    const { db } = d.storage;
    const events = (await db.selectFrom('events').select('type').where('subject_ref', '=', id).orderBy('id').execute()).map((r) => r.type);
    const fills = await db.selectFrom('order_fills').select(['fill_qty', 'exchange_ref']).where('order_id', '=', id).execute();
    return { events, fills };
  }

  /**
   * A killed process keeps its leases until they run out: the partner's session (15 s) and reading
   * the partner's report log (30 s). The restart tests let them run out at once; the failover test
   * below waits for them.
   */
  async function expireLeases(d: ProcessDeployment): Promise<void> {
    await d.storage.db.updateTable('fix_sessions').set({ lease_until: 0 }).execute();
    await d.storage.db.updateTable('connector_positions').set({ lease_until: 0 }).execute();
  }

  // The databases' suites run side by side (each has its own acceptor, ports and service, and most of
  // their time is spent waiting: logons, heartbeats, timers); the tests of each run one after another
  // (a suite's concurrency is inherited by the suites inside it).
  describe('on each database at once', { concurrency: true }, () => {
    for (const database of DATABASES) {
      describe(`service processes killed, on ${database.name}`, { concurrency: 1 }, () => {
        test("killed after an order's hand-over was recorded, before and then after the NewOrderSingle reached the gateway: on restart each order reaches it once, and the fill made meanwhile arrives by resend and is applied once", async (t) => {
          const executor = await startExecutor(t, nextPort++);
          const proxy = await startFixProxy(t, executor.port);
          const d = await processDeployment(t, database, { port: proxy.port });
          let service = await spawnService(t, d.env);
          await waitFor('the service to log on', () => loggedOn(d), 20_000);

          for (const when of ['before', 'after'] as const) {
            // `before`: the order is held on the network; `after`: it reaches the executor, which
            // fills it, and the report is held. Either way the process dies with it in flight.
            const heldType = when === 'before' ? 'D' : '8';
            proxy.rule = (m) => (m.fields.get(35) === heldType ? 'hold' : 'pass');
            placeOrder(await apiAt(service.base, d.client), d.partnerId).catch(() => undefined);
            await waitFor('a message in flight', () => proxy.held().length === 1);
            const inFlight = proxy.held()[0] as FixFrame;
            const orderId = inFlight.fields.get(11) as string;
            const recorded = await d.storage.db
              .selectFrom('fix_messages')
              .select('seq')
              .where('partner_id', '=', d.partnerId)
              .where('cl_ord_id', '=', orderId)
              .executeTakeFirst();
            assert.ok(recorded !== undefined, `${when}: the hand-over is recorded`);
            await kill(service);
            proxy.rule = () => 'pass';
            if (when === 'before') assert.equal(toExecutor(executor, 'D', orderId).length, 0, 'the executor never had the order');
            else await logged(() => fromExecutor(executor, '8', orderId).length === 1);

            await expireLeases(d);
            service = await spawnService(t, d.env);
            const api = await apiAt(service.base, d.client);
            const filled = await orderWhen(api, orderId, 'filled', 20_000);
            assert.equal(filled.filled_qty, 10);
            await waitFor('the fill event', async () => (await orderFacts(d, orderId)).events.includes('order.executed'));
            const facts = await orderFacts(d, orderId);
            assert.deepEqual(facts.events, ['order.created', 'order.routed', 'order.executed'], when);
            assert.equal(facts.fills.length, 1, when);

            // The executor had one NewOrderSingle, and filled it once.
            await logged(() => toExecutor(executor, 'D', orderId).length === 1);
            const orders = toExecutor(executor, 'D', orderId);
            assert.equal(orders.length, 1, when);
            const reports = fromExecutor(executor, '8', orderId);
            if (when === 'before') {
              // Sent only as the resend the executor asked for, under its first number and time.
              assert.equal(orders[0]?.fields.get(43), 'Y');
              assert.equal(orders[0]?.fields.get(34), String(recorded.seq));
              assert.equal(orders[0]?.fields.get(122), inFlight.fields.get(52));
              assert.equal(reports.length, 1);
            } else {
              assert.equal(orders[0]?.fields.get(43), undefined);
              // The fill was sent while the service was down, then again when the new process asked.
              assert.deepEqual(
                reports.map((r) => r.fields.get(43) ?? 'N'),
                ['N', 'Y'],
              );
              assert.equal(reports[1]?.fields.get(17), facts.fills[0]?.exchange_ref);
              assert.equal(
                toExecutor(executor, '2').at(-1)?.fields.get(7),
                inFlight.fields.get(34),
                'the new process asked for the report',
              );
            }
          }
          assert.equal(
            executor.messages().filter((m) => m.direction === 'outgoing' && ['3', '5'].includes(m.fields.get(35) ?? '')).length,
            0,
            'the executor rejected nothing and logged nobody out',
          );
          await service.stop();
        });

        if (database.name === 'postgres') {
          test('two processes share the partner: the one holding the session is killed, the other takes the session over within 30 s and orders go on', async (t) => {
            const executor = await startExecutor(t, nextPort++);
            const d = await processDeployment(t, database, { port: executor.port });
            const processes = await Promise.all([spawnService(t, d.env), spawnService(t, d.env)]);
            await waitFor('one process to log on', () => loggedOn(d), 20_000);
            const session = await findSession(d.storage.db, d.partnerId);
            const holder = processes.find((p) => session?.lease_owner?.startsWith(`${p.pid}-`)) as SpawnedProcess;
            const other = processes.find((p) => p !== holder) as SpawnedProcess;
            assert.ok(holder !== undefined && other !== undefined, `the session is held by one of the two (${session?.lease_owner})`);
            const before = await placeOrder(await apiAt(holder.base, d.client), d.partnerId);
            await logged(() => toExecutor(executor, 'D', before.id).length === 1);

            await kill(holder);
            const killedAt = Date.now();
            await waitFor('the other process to log on', () => loggedOn(d, other, killedAt), 35_000);
            const tookOver = ((await findSession(d.storage.db, d.partnerId))?.last_logon_at ?? Number.POSITIVE_INFINITY) - killedAt;
            assert.ok(tookOver <= 30_000, `taken over after ${tookOver} ms`);
            t.diagnostic(`session taken over ${tookOver} ms after the kill`);
            await logged(() => toExecutor(executor, 'A').length === 2).catch((error: unknown) => {
              t.diagnostic(
                executor
                  .messages()
                  .map((m) => `${m.direction} ${m.text}`)
                  .join('\n'),
              );
              throw error;
            });
            const incoming = executor.messages().filter((m) => m.direction === 'incoming');
            const logon = incoming.filter((m) => m.fields.get(35) === 'A')[1] as FixMessage;
            assert.equal(
              Number(logon.fields.get(34)),
              Number(incoming[incoming.indexOf(logon) - 1]?.fields.get(34)) + 1,
              'the numbers go on',
            );

            const api = await apiAt(other.base, d.client);
            const after = await placeOrder(api, d.partnerId);
            await orderWhen(api, after.id, 'filled', 35_000);
            await orderWhen(api, before.id, 'filled', 35_000);
            for (const id of [before.id, after.id]) {
              assert.equal(toExecutor(executor, 'D', id).length, 1);
              assert.equal((await orderFacts(d, id)).fills.length, 1);
            }
            await other.stop();
          });
        }
      });
    }
  });
}

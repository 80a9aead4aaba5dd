import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { orderRow } from '../../test/support/orders.js';
import { systemClock } from '../lib/clock.js';
import { newId, type OrderId } from '../lib/ids.js';
import { insertOrder } from '../orders/order.repository.js';
import type { Order } from '../orders/order.schemas.js';
import type { AfterApply } from '../orders/ports.js';
import { atCommit } from '../storage/at-commit.js';
import type { Storage } from '../storage/database.js';
import type { ExecutionReport } from './connector.js';
import { HandOverAnswers } from './hand-over-answers.js';
import { ReportApplier } from './report-applier.js';

const at = (ms: number) => new Date(ms).toISOString();

function reportsOf(orderId: OrderId, executedAt: number): ExecutionReport[] {
  return [
    { report_id: `t:${orderId}:1`, order_id: orderId, seq: 1, occurred_at: at(executedAt), type: 'accepted' },
    {
      report_id: `t:${orderId}:2`,
      order_id: orderId,
      seq: 2,
      occurred_at: at(executedAt),
      type: 'fill',
      fill_qty: 1,
      fill_price_cents: 1_500_000,
      cum_qty: 1,
      leaves_qty: 0,
      exchange_ref: `BRVM-${orderId}`,
      executed_at: at(executedAt),
    },
  ];
}

async function createdOrder(storage: Storage): Promise<OrderId> {
  const now = Date.now();
  const id = newId('order', now);
  await storage.transact((trx) =>
    insertOrder(trx, orderRow({ id, client_id: 'cli_answers', created_at: now, status: 'created', connector: 'fix', rcpt_to: 'sgi_x' })),
  );
  return id;
}

async function orderState(storage: Storage, id: string) {
  const row = await storage.db
    .selectFrom('orders')
    .select(['status', 'last_report_seq', 'filled_qty'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const fills = await storage.db.selectFrom('order_fills').select('seq').where('order_id', '=', id).execute();
  const events = await storage.db.selectFrom('events').select(['type', 'origin']).where('subject_ref', '=', id).orderBy('id').execute();
  return { ...row, fills: fills.length, events };
}

/** An order's state as the assertions compare it. */
function brief(state: Awaited<ReturnType<typeof orderState>>) {
  return {
    status: state.status,
    seq: state.last_report_seq,
    filled: state.filled_qty,
    fills: state.fills,
    events: state.events.map((e) => e.type),
  };
}

for (const database of DATABASES) {
  describe(`reports applied with their log entry, on ${database.name}`, { concurrency: 1 }, () => {
    test("each report applies in its own savepoint; the waiting hand-over's answer runs with it; a failing one is left alone", async (t) => {
      const storage = await openTestStorage(t, database);
      const lines: string[] = [];
      const log = pino(
        { level: 'info' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.push(chunk.toString('utf8'));
            done();
          },
        }),
      );
      const [good, broken] = [await createdOrder(storage), await createdOrder(storage)];
      // The position of `broken`'s investor cannot be written (a fault injected where a fill ends).
      const applier = new ReportApplier({ dialect: storage.dialect, livemode: false }, systemClock, log, {
        fillApplied: async (_trx, order) => {
          if (order.id === broken) throw new Error('position store refused the fill');
        },
      });
      const answers = new HandOverAnswers(applier, log);
      const answeredWith: Order[] = [];
      const after: AfterApply = async (_trx, order) => {
        answeredWith.push(order);
      };
      after.origin = { request_id: 'req_waiting', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
      const answering = answers.waitFor(good, after);

      const now = Date.now();
      const done = await storage.transact(async (trx) => {
        // A write the surrounding transaction registered before: it commits whatever the reports do.
        void atCommit(trx, () =>
          trx
            .insertInto('connector_positions')
            .values({ connector: 'fix:sgi_x', position: '7', lease_owner: null, lease_until: 0 })
            .execute(),
        );
        return answers.applyToOrders(trx, [...reportsOf(good, now), ...reportsOf(broken, now)]);
      });
      assert.equal(answering.ran, true);
      assert.equal(answering.committed, false, 'committed is set only once the caller reports the commit');
      done?.();
      assert.equal(answering.committed, true);
      assert.deepEqual(
        answeredWith.map((o) => o.status),
        ['routed'],
        "the hand-over's answer ran once, with the order as its answer left it",
      );

      const applied = await orderState(storage, good);
      assert.deepEqual(brief(applied), { status: 'filled', seq: 2, filled: 1, fills: 1, events: ['order.routed', 'order.executed'] });
      assert.equal(
        JSON.parse(applied.events[0]?.origin ?? 'null')?.request_id,
        'req_waiting',
        "the answer's event keeps the request's origin",
      );
      assert.equal(applied.events[1]?.origin, null, "a fill is no request's doing");

      // The broken fill rolled back alone: its acceptance stands, nothing of the fill is written.
      const left = await orderState(storage, broken);
      assert.deepEqual(brief(left), { status: 'routed', seq: 1, filled: 0, fills: 0, events: ['order.routed'] });
      assert.ok(lines.some((l) => l.includes('"seq":2') && l.includes(broken) && l.includes('not applied with its log entry')));
      const position = await storage.db
        .selectFrom('connector_positions')
        .select('position')
        .where('connector', '=', 'fix:sgi_x')
        .executeTakeFirst();
      assert.equal(position?.position, '7');

      // Delivered again (the log's reader, a resend): nothing applies twice; the answer does not run again.
      await storage.transact((trx) => answers.applyToOrders(trx, reportsOf(good, now)));
      assert.equal(answeredWith.length, 1);
      assert.equal((await orderState(storage, good)).events.length, 2);
      answers.done(good, answering);
    });

    test('a transaction that fails after applying leaves the order as it was and the answer unconfirmed', async (t) => {
      const storage = await openTestStorage(t, database);
      const log = pino({ level: 'silent' });
      const applier = new ReportApplier({ dialect: storage.dialect, livemode: false }, systemClock, log);
      const answers = new HandOverAnswers(applier, log);
      const id = await createdOrder(storage);
      const answering = answers.waitFor(id, async () => undefined);
      await assert.rejects(
        storage.transact(async (trx) => {
          await answers.applyToOrders(trx, reportsOf(id, Date.now()));
          throw new Error('the session could not commit');
        }),
        /could not commit/,
      );
      assert.equal(answering.ran, true);
      assert.equal(answering.committed, false);
      const state = await orderState(storage, id);
      assert.deepEqual(
        { status: state.status, seq: state.last_report_seq, fills: state.fills, events: state.events.length },
        {
          status: 'created',
          seq: 0,
          fills: 0,
          events: 0,
        },
      );
    });
  });
}

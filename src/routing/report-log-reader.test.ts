import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { orderRow } from '../../test/support/orders.js';
import { systemClock } from '../lib/clock.js';
import { newId, type OrderId } from '../lib/ids.js';
import { insertOrder } from '../orders/order.repository.js';
import type { Storage } from '../storage/database.js';
import type { ExecutionReport, PartnerConnector, ReportBatch } from './connector.js';
import { ReportApplier } from './report-applier.js';
import { ReportLogReader } from './report-log-reader.js';

/** A partner's report log as a list: positions are 1-based indexes into it. */
class ListedLog implements Pick<PartnerConnector, 'name' | 'reports'> {
  readonly name = 'listed';
  constructor(readonly entries: ExecutionReport[]) {}
  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    const from = since === null ? 0 : Number(since);
    const reports = this.entries.slice(from, from + (options?.limit ?? 500));
    return { reports, position: reports.length === 0 ? since : String(from + reports.length) };
  }
}

const accepted = (orderId: OrderId): ExecutionReport => ({
  report_id: `listed:${orderId}:1`,
  order_id: orderId,
  seq: 1,
  occurred_at: new Date().toISOString(),
  type: 'accepted',
});

const filled = (orderId: OrderId): ExecutionReport => ({
  report_id: `listed:${orderId}:2`,
  order_id: orderId,
  seq: 2,
  occurred_at: new Date().toISOString(),
  type: 'fill',
  fill_qty: 1,
  fill_price_cents: 1_000_000,
  cum_qty: 1,
  leaves_qty: 0,
  exchange_ref: `BRVM-${orderId}`,
  executed_at: new Date().toISOString(),
});

async function createdOrders(storage: Storage, n: number): Promise<OrderId[]> {
  const now = Date.now();
  const ids = Array.from({ length: n }, () => newId('order', now));
  await storage.transact(async (trx) => {
    for (const id of ids) await insertOrder(trx, orderRow({ id, client_id: 'cli_log', created_at: now, status: 'created' }));
  });
  return ids;
}

const statusOf = async (storage: Storage, id: string) =>
  (await storage.db.selectFrom('orders').select(['status', 'last_report_seq']).where('id', '=', id).executeTakeFirstOrThrow()).status;

const positionOf = async (storage: Storage) =>
  (await storage.db.selectFrom('connector_positions').select('position').where('connector', '=', 'listed:sgi_x').executeTakeFirst())
    ?.position;

/** A reader of `storage`'s logs whose applier has no fill effects. */
function plainReader(storage: Storage): ReportLogReader {
  const applier = new ReportApplier({ dialect: storage.dialect, livemode: false }, systemClock, pino({ level: 'silent' }));
  const options = { owner: 'reader-1', leaseMs: 30_000 };
  return new ReportLogReader(storage.db, storage.transact, applier, systemClock, options, pino({ level: 'silent' }));
}

for (const database of DATABASES) {
  describe(`reading a partner's report log, on ${database.name}`, { concurrency: 1 }, () => {
    test('a report that fails to apply stops the batch where it is; the next read applies the rest and moves the position', async (t) => {
      const storage = await openTestStorage(t, database);
      const [a, b, c] = (await createdOrders(storage, 3)) as [OrderId, OrderId, OrderId];
      let broken = true;
      const applier = new ReportApplier({ dialect: storage.dialect, livemode: false }, systemClock, pino({ level: 'silent' }), {
        fillApplied: async (_trx, order) => {
          if (broken && order.id === b) throw new Error('position store refused the fill');
        },
      });
      const options = { owner: 'reader-1', leaseMs: 30_000 };
      const reader = new ReportLogReader(storage.db, storage.transact, applier, systemClock, options, pino({ level: 'silent' }));
      const log = new ListedLog([accepted(a), filled(a), accepted(b), filled(b), accepted(c)]);

      assert.equal(await reader.poll('listed:sgi_x', log as unknown as PartnerConnector), 3);
      assert.deepEqual(
        [await statusOf(storage, a), await statusOf(storage, b), await statusOf(storage, c)],
        ['filled', 'routed', 'created'],
      );
      assert.equal(await positionOf(storage), null, 'the position stays before the batch');

      broken = false;
      assert.equal(await reader.poll('listed:sgi_x', log as unknown as PartnerConnector), 2, 'what was applied is passed over');
      assert.deepEqual(
        [await statusOf(storage, a), await statusOf(storage, b), await statusOf(storage, c)],
        ['filled', 'filled', 'routed'],
      );
      assert.equal(await positionOf(storage), '5');
      assert.equal(await reader.poll('listed:sgi_x', log as unknown as PartnerConnector), 0);
    });

    test('a batch longer than one transaction is applied whole, in order, and the position moves once', async (t) => {
      const storage = await openTestStorage(t, database);
      const ids = await createdOrders(storage, 130);
      const reader = plainReader(storage);
      const log = new ListedLog([...ids.map(accepted), ...ids.map(filled)]);
      assert.equal(await reader.poll('listed:sgi_x', log as unknown as PartnerConnector), 260);
      const rows = await storage.db.selectFrom('orders').select(['status', 'last_report_seq']).where('client_id', '=', 'cli_log').execute();
      assert.deepEqual(new Set(rows.map((r) => `${r.status}/${r.last_report_seq}`)), new Set(['filled/2']));
      assert.equal(await positionOf(storage), '260');
    });

    test('a chunk of answers costs the same few round trips whatever its length: its orders are locked and read in one statement', {
      skip: database.name === 'postgres' ? false : 'round trips are counted on PostgreSQL connections',
    }, async (t) => {
      const storage = await openTestStorage(t, database);
      const reader = plainReader(storage);
      const sent: Record<number, { roundTrips: number; transactions: number }> = {};
      for (const n of [1, 40]) {
        const ids = await createdOrders(storage, n);
        const log = new ListedLog(ids.map(accepted));
        const before = storage.wireStats();
        assert.equal(await reader.poll(`listed:sgi_${n}`, log as unknown as PartnerConnector), n);
        const after = storage.wireStats();
        assert.ok(before !== null && after !== null);
        sent[n] = { roundTrips: after.roundTrips - before.roundTrips, transactions: after.transactions - before.transactions };
        for (const id of ids) assert.equal(await statusOf(storage, id), 'routed');
      }
      t.diagnostic(JSON.stringify(sent));
      // The lease, the applied seqs read, then the chunk: its orders locked with its BEGIN, its writes with its COMMIT.
      assert.deepEqual(sent[40], sent[1]);
      assert.ok((sent[40]?.roundTrips ?? Infinity) <= 7, JSON.stringify(sent));
    });
  });
}

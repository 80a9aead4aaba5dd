import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../../test/support/harness.js';
import type { OrderId } from '../../lib/ids.js';
import type { ExecutionReport } from '../connector.js';
import {
  appendReportsAtCommit,
  commitSent,
  findSession,
  insertMessages,
  insertSessionIfMissing,
  messagesBetween,
  reportsAfter,
  SequenceConflictError,
} from './fix.repository.js';

const PARTNER = 'sgi_fix_test';
const KEY = { partnerId: PARTNER, beginString: 'FIX.4.4', senderCompId: 'CAURI', targetCompId: 'EXEC', period: null };
const NOW = Date.parse('2026-11-23T10:00:00.000Z');

function accepted(orderId: string, seq: number): ExecutionReport {
  return {
    type: 'accepted',
    report_id: `fix:${orderId}:${seq}`,
    order_id: orderId as OrderId,
    seq,
    occurred_at: new Date(NOW).toISOString(),
  };
}

const logged = (reports: readonly { pos: number; report: ExecutionReport }[]) => reports.map((r) => `${r.pos} ${r.report.report_id}`);

for (const database of DATABASES) {
  describe(`the FIX tables' batched writes, on ${database.name}`, { concurrency: 1 }, () => {
    test("the reports of a transaction's messages reach the log in the order they were applied, at its commit", async (t) => {
      const storage = await openTestStorage(t, database);
      await insertSessionIfMissing(storage.db, KEY, NOW);
      await storage.transact(async (trx) => {
        appendReportsAtCommit(trx, PARTNER, [accepted('ord_a', 1), accepted('ord_a', 2)]);
        appendReportsAtCommit(trx, PARTNER, [accepted('ord_b', 1)]);
        // Not in the log before the transaction's last writes.
        assert.deepEqual(await trx.selectFrom('fix_reports').select('pos').execute(), []);
      });
      await storage.transact(async (trx) => appendReportsAtCommit(trx, PARTNER, [accepted('ord_c', 1)]));
      assert.deepEqual(logged(await reportsAfter(storage.db, PARTNER, 0, 10)), [
        '1 fix:ord_a:1',
        '2 fix:ord_a:2',
        '3 fix:ord_b:1',
        '4 fix:ord_c:1',
      ]);
      assert.equal(Number((await findSession(storage.db, PARTNER))?.report_pos), 4);
    });

    test('the reports of work that failed are never logged; work run beside it logs its own', async (t) => {
      const storage = await openTestStorage(t, database);
      await insertSessionIfMissing(storage.db, KEY, NOW);
      // Queued together: on SQLite both run in one transaction, each in a savepoint of its own.
      const failed = storage.transact(async (trx) => {
        appendReportsAtCommit(trx, PARTNER, [accepted('ord_failed', 1)]);
        throw new Error('refused');
      });
      const kept = storage.transact(async (trx) => appendReportsAtCommit(trx, PARTNER, [accepted('ord_kept', 1)]));
      await assert.rejects(failed, /refused/);
      await kept;
      assert.deepEqual(logged(await reportsAfter(storage.db, PARTNER, 0, 10)), ['1 fix:ord_kept:1']);
    });

    test('messages sent together move the sequence number once, only from the number expected', async (t) => {
      const storage = await openTestStorage(t, database);
      await insertSessionIfMissing(storage.db, KEY, NOW);
      const rows = [1, 2, 3].map((seq) => ({
        partner_id: PARTNER,
        seq,
        msg_type: 'D',
        cl_ord_id: `ord_${seq}`,
        sending_time: NOW,
        body: '{}',
      }));
      await storage.transact(async (trx) => {
        await commitSent(trx, PARTNER, 1, NOW, 3);
        await insertMessages(trx, rows);
      });
      assert.equal((await findSession(storage.db, PARTNER))?.next_sender_seq, 4);
      assert.deepEqual(
        (await messagesBetween(storage.db, PARTNER, 1, 10)).map((m) => `${m.seq} ${m.cl_ord_id}`),
        ['1 ord_1', '2 ord_2', '3 ord_3'],
      );
      // Another writer's lot from the same number: refused, and nothing of it is written.
      await assert.rejects(
        storage.transact(async (trx) => {
          await commitSent(trx, PARTNER, 1, NOW, 2);
          await insertMessages(
            trx,
            rows.slice(0, 2).map((r) => ({ ...r, seq: r.seq + 10 })),
          );
        }),
        SequenceConflictError,
      );
      assert.equal((await findSession(storage.db, PARTNER))?.next_sender_seq, 4);
      assert.equal((await messagesBetween(storage.db, PARTNER, 1, 100)).length, 3);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql, type Compilable, type Kysely } from 'kysely';
import { DATABASES, openSharedStorages, openTestStorage } from '../../test/support/harness.js';
import { orderRow } from '../../test/support/orders.js';
import { encodeUuid, newId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import {
  clientOrdersQuery,
  findOrdersForUpdate,
  insertOrder,
  listClientOrders,
  subjectOrdersInWindow,
  subjectOrdersInWindowQuery,
} from './order.repository.js';
import type { OrderRow } from './order.table.js';

const START = Date.UTC(2026, 10, 24, 9);
const STATUSES = ['filled', 'filled', 'filled', 'routed', 'filled', 'failed', 'filled', 'cancelled'] as const;

function order(id: string, at: number, i: number, clientId = 'cli_a'): OrderRow {
  return orderRow({
    id,
    client_id: clientId,
    created_at: at,
    status: STATUSES[i % STATUSES.length] as OrderRow['status'],
    kyc_attestation_id: `att_${i % 4}`,
    subject_id: `sub_${i % 4}`,
  });
}

/** An order id whose UUIDv7 time is `ms` (as newId makes when 4096 ids share the millisecond before). */
function idAt(ms: number, tail: number): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70;
  bytes.writeUInt32BE(tail, 12);
  return `ord_${encodeUuid(bytes)}`;
}

/** 200 orders of client A a millisecond apart, and one of client B among them. */
async function seed(db: Kysely<Database>): Promise<OrderRow[]> {
  const rows = Array.from({ length: 200 }, (_, i) => order(newId('order', START + i), START + i, i));
  // An order whose id's time runs 5 ms ahead of its created_at (the id borrowed later milliseconds).
  rows.push(order(idAt(START + 105, 1), START + 100, 3));
  rows.push(order(newId('order', START + 50), START + 50, 5, 'cli_b'));
  await db.transaction().execute(async (trx) => {
    for (const row of rows) await insertOrder(trx, row);
  });
  return rows;
}

const page = { limit: 1000 };
const idsOf = (rows: readonly OrderRow[]) => rows.map((r) => r.id);
const newestFirst = (rows: readonly OrderRow[]) => idsOf(rows).sort().reverse();

async function planOf(db: Kysely<Database>, query: Compilable<unknown>): Promise<string> {
  const compiled = query.compile();
  const rows = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
  return rows.rows.map((r) => r.detail).join('\n');
}

for (const database of DATABASES) {
  describe(`order listing on ${database.name}`, () => {
    test('each filter gives exactly its orders, newest first, whichever index serves it', async (t) => {
      const { db } = await openTestStorage(t, database);
      const rows = await seed(db);
      const mine = rows.filter((r) => r.client_id === 'cli_a');
      const list = (filter: Parameters<typeof listClientOrders>[2]) => listClientOrders(db, 'cli_a', filter, page).then(idsOf);
      for (const status of ['routed', 'failed', 'cancelled', 'filled', 'created']) {
        assert.deepEqual(await list({ status }), newestFirst(mine.filter((r) => r.status === status)), status);
      }
      assert.deepEqual(
        await list({ kyc_attestation_id: 'att_1', subjectId: 'sub_1' }),
        newestFirst(mine.filter((r) => r.kyc_attestation_id === 'att_1')),
      );
      assert.deepEqual(
        await list({ status: 'failed', kyc_attestation_id: 'att_1', subjectId: 'sub_1' }),
        newestFirst(mine.filter((r) => r.kyc_attestation_id === 'att_1' && r.status === 'failed')),
      );
      // Creation-time bounds: created_at decides, including the order whose id runs ahead of it.
      const T = START + 101;
      assert.deepEqual(await list({ createdLt: T }), newestFirst(mine.filter((r) => r.created_at < T)));
      assert.ok((await list({ createdLt: T })).includes(idAt(START + 105, 1)));
      assert.deepEqual(await list({ createdGte: T }), newestFirst(mine.filter((r) => r.created_at >= T)));
      assert.deepEqual(
        await list({ createdGte: START + 20, createdLt: START + 30, status: 'filled' }),
        newestFirst(mine.filter((r) => r.created_at >= START + 20 && r.created_at < START + 30 && r.status === 'filled')),
      );
      // Page after page by the id cursor, towards older orders and back towards newer ones.
      for (const filter of [{ status: 'routed' }, { kyc_attestation_id: 'att_2', subjectId: 'sub_2' }, { createdLt: START + 150 }]) {
        const whole = await list(filter);
        const older: string[] = [];
        for (let before: string | undefined; ; ) {
          const got = idsOf(await listClientOrders(db, 'cli_a', filter, { limit: 7, ...(before === undefined ? {} : { before }) }));
          older.push(...got.slice(0, 7));
          if (got.length <= 7) break;
          before = got[6];
        }
        assert.deepEqual(older, whole, JSON.stringify(filter));
        const newer: string[] = [];
        for (let after = whole.at(-1) as string; ; ) {
          const got = idsOf(await listClientOrders(db, 'cli_a', filter, { limit: 7, after }));
          newer.push(...got.slice(0, 7));
          if (got.length <= 7) break;
          after = got[6] as string;
        }
        assert.deepEqual(newer, whole.slice(0, -1).reverse(), JSON.stringify(filter));
      }
      // The monthly cap's rows: one subject's orders created in the window.
      const window = await subjectOrdersInWindow(db, 'cli_a', 'sub_3', START + 90, START + 101);
      assert.equal(
        window.length,
        mine.filter((r) => r.subject_id === 'sub_3' && r.created_at >= START + 90 && r.created_at < START + 101).length,
      );
      assert.equal(window.length, 4, 'the three of the window a millisecond apart, and the one whose id runs ahead');
    });

    test('orders locked together: the existing ones by id, each row held until the transaction ends', async (t) => {
      const [storage, other] = await openSharedStorages(t, database);
      const rows = await seed(storage.db);
      const wanted = [rows[3]?.id, rows[7]?.id, rows[3]?.id, 'ord_unknown'] as string[];
      await storage.transact(async (trx) => {
        const locked = await findOrdersForUpdate(trx, storage.dialect, wanted);
        assert.deepEqual([...locked.keys()].sort(), [rows[3]?.id, rows[7]?.id].sort());
        assert.equal(locked.get(rows[7]?.id as string)?.status, rows[7]?.status);
        if (storage.dialect === 'postgres') {
          // Another process cannot lock one of them meanwhile (SQLite has one writer at a time).
          await assert.rejects(
            other.db.transaction().execute((o) => sql`select id from orders where id = ${rows[7]?.id} for update nowait`.execute(o)),
            (error: { code?: string }) => error.code === '55P03',
          );
        }
      });
    });

    if (database.name === 'sqlite') {
      test('selective filters read an index of their own orders, not every order of the client', async (t) => {
        const { db } = await openTestStorage(t, database);
        await seed(db);
        const plan = (filter: Parameters<typeof clientOrdersQuery>[2]) => planOf(db, clientOrdersQuery(db, 'cli_a', filter, { limit: 50 }));
        assert.match(await plan({ status: 'routed' }), /SEARCH orders USING INDEX orders_client_status \(client_id=\? AND status=\?\)/);
        assert.match(
          await plan({ kyc_attestation_id: 'att_1', subjectId: 'sub_1' }),
          /SEARCH orders USING INDEX orders_client_subject \(client_id=\? AND subject_id=\?\)/,
        );
        assert.match(await plan({ createdLt: START + 10 }), /SEARCH orders USING INDEX orders_client_id \(client_id=\? AND id<\?\)/);
        assert.match(
          await plan({ createdGte: START + 10, createdLt: START + 20 }),
          /SEARCH orders USING INDEX orders_client_id \(client_id=\? AND id>\? AND id<\?\)/,
        );
        for (const filter of [{ status: 'routed' }, { kyc_attestation_id: 'att_1', subjectId: 'sub_1' }, { createdLt: START + 10 }]) {
          assert.doesNotMatch(await plan(filter), /TEMP B-TREE/, 'read in id order, no sort');
        }
        assert.match(
          await planOf(db, subjectOrdersInWindowQuery(db, 'cli_a', 'sub_1', START, START + 10)),
          /SEARCH orders USING INDEX orders_client_subject \(client_id=\? AND subject_id=\? AND id>\? AND id<\?\)/,
        );
      });
    }
  });
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { rowsReadOnPostgres, sqlitePlan } from '../../test/support/query-plans.js';
import { orderRow } from '../../test/support/orders.js';
import { newId } from '../lib/ids.js';
import { insertOrder, openPartnerAfterQuery, partnersWithOpenOrders } from './order.repository.js';
import type { OrderRow } from './order.table.js';

const ORDERS = 6000;
const START = Date.UTC(2026, 10, 28, 9);
const STATUSES = ['routed', 'filled', 'partially_filled', 'cancelled', 'routed', 'created'] as const;
const PARTNERS = ['sgi_a', 'sgi_b', 'sgi_c', 'sgi_d'];

for (const database of DATABASES) {
  test(`the router's partners with open orders: each once, in order, read a step per partner however many orders are open (${database.name})`, async (t) => {
    const { db } = await openTestStorage(t, database);
    const rows: OrderRow[] = Array.from({ length: ORDERS }, (_, i) =>
      orderRow({
        id: newId('order', START + i),
        client_id: 'cli_a',
        created_at: START + i,
        status: STATUSES[i % STATUSES.length] as OrderRow['status'],
        // sgi_d has orders, none of them open; sgi_b's are open on two connectors.
        rcpt_to: PARTNERS[i % PARTNERS.length] as string,
        connector: i % PARTNERS.length === 3 && i % STATUSES.length !== 1 ? 'none' : i % 7 === 0 ? 'fix' : 'sandbox',
      }),
    );
    for (const row of rows) if (row.rcpt_to === 'sgi_d') row.status = 'filled';
    await db.transaction().execute(async (trx) => {
      for (const row of rows) await insertOrder(trx, row);
    });
    const open = rows.filter((r) => r.status === 'routed' || r.status === 'partially_filled');
    const expected = [...new Set(open.map((r) => `${r.rcpt_to} ${r.connector}`))].sort();
    assert.ok(expected.length >= 4 && open.length >= 2500, `${expected.length} partners over ${open.length} open orders`);
    assert.deepEqual(
      (await partnersWithOpenOrders(db)).map((p) => `${p.rcpt_to} ${p.connector}`),
      expected,
    );

    // One step reads one entry of the partial index, not every open order.
    const step = openPartnerAfterQuery(db, 'sgi_a', 'fix').compile();
    if (database.name === 'postgres') {
      const { rows, plan } = await rowsReadOnPostgres(db, step, 'orders');
      assert.equal(rows, 1, plan);
    } else {
      const details = await sqlitePlan(db, step);
      assert.match(details, /USING (COVERING )?INDEX orders_open_partner \(\(rcpt_to,connector\)>\(\?,\?\)\)/, details);
      assert.doesNotMatch(details, /TEMP B-TREE/, details);
    }
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { openPartnerAfterQuery, partnersWithOpenOrders } from '../../src/orders/order.repository.js';
import { fillOf } from '../../src/orders/fill.js';
import { JournaledSandboxConnector } from '../../src/routing/sandbox/journaled-connector.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { OrderId } from '../../src/lib/ids.js';
import { migrateToLatest, migrateUpTo } from '../../src/storage/migrate.js';
import { DATABASES, openUnmigratedStorage } from '../support/harness.js';

// Upgrades from a schema an older version left, with its data, to the latest.
for (const database of DATABASES) {
  describe(`upgrades on ${database.name}`, () => {
    test('the event queue: events not yet fanned out are queued, fanned-out ones are not, and dispatched_at is gone', async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-24T09-00-webhook-queue-indexes', storage.schema);
      const insert = (id: string, dispatchedAt: number | null) =>
        sql`insert into events (id, client_id, type, livemode, created_at, data, subject_ref, dispatched_at)
            values (${id}, null, 'order.created', 0, 1, '{}', null, ${dispatchedAt})`.execute(db);
      await insert('evt_a', 5);
      await insert('evt_b', null);
      await insert('evt_c', null);
      await insert('evt_d', 7);
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-24T10-00-event-queue'), JSON.stringify(report));
      const queued = await db.selectFrom('event_queue').select('event_id').orderBy('event_id').execute();
      assert.deepEqual(
        queued.map((q) => q.event_id),
        ['evt_b', 'evt_c'],
      );
      const events = await db.selectFrom('events').selectAll().orderBy('id').execute();
      assert.equal(events.length, 4);
      assert.ok(
        events.every((row) => !('dispatched_at' in row)),
        'the column is dropped',
      );
      // Asking again for a migration already applied changes nothing (and never migrates down).
      assert.deepEqual(await migrateUpTo(db, '2026-11-24T09-00-webhook-queue-indexes', storage.schema), { applied: [] });
      assert.equal((await db.selectFrom('event_queue').select('event_id').execute()).length, 2);
    });

    test("instrument rules: rows from before get lots and ticks of 1, no ISIN, and their exchange's band (none for funds and bills)", async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-24T15-00-deferred-delivery-listing', storage.schema);
      const insert = (code: string, exchange: string, cls: string, price: number) =>
        sql`insert into instruments (code, exchange, class, name, reference_price_cents, status, created_at, updated_at)
            values (${code}, ${exchange}, ${cls}, ${code}, ${price}, 'active', 1, 1)`.execute(db);
      await insert('KOLA.BRVM', 'BRVM', 'equities', 1_550_001);
      await insert('FCP.BRVM', 'BRVM', 'opcvm', 1_156_000);
      await insert('BILL.BVMAC', 'BVMAC', 'money_market', 989_000);
      await insert('BOND.BVMAC', 'BVMAC', 'bonds', 1_000_000);
      await insert('GOLDF.GSE', 'GSE', 'equities', 260_000);
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-25T01-00-instrument-rules'), JSON.stringify(report));
      const rows = await db
        .selectFrom('instruments')
        .select(['code', 'isin', 'lot_size', 'tick_size_cents', 'price_band_bps', 'reference_price_cents'])
        .orderBy('code')
        .execute();
      assert.deepEqual(rows, [
        { code: 'BILL.BVMAC', isin: null, lot_size: 1, tick_size_cents: 1, price_band_bps: null, reference_price_cents: 989_000 },
        { code: 'BOND.BVMAC', isin: null, lot_size: 1, tick_size_cents: 1, price_band_bps: 1000, reference_price_cents: 1_000_000 },
        { code: 'FCP.BRVM', isin: null, lot_size: 1, tick_size_cents: 1, price_band_bps: null, reference_price_cents: 1_156_000 },
        { code: 'GOLDF.GSE', isin: null, lot_size: 1, tick_size_cents: 1, price_band_bps: 1000, reference_price_cents: 260_000 },
        { code: 'KOLA.BRVM', isin: null, lot_size: 1, tick_size_cents: 1, price_band_bps: 750, reference_price_cents: 1_550_001 },
      ]);
      assert.deepEqual(await db.selectFrom('fx_rates').selectAll().execute(), []);
    });

    test('the index of open orders: the router finds the partners of routed and partially filled orders, and no others', async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-24T10-00-event-queue', storage.schema);
      const insert = (id: string, status: string, partner: string) =>
        sql`insert into orders (id, client_id, status, rcpt_to, kyc_attestation_id, kyc_attestation_sha256, subject_id, kyc_level,
              instrument, side, qty, limit_price_cents, reference_price_cents, filled_qty, fill_notional_cents, failure_reason,
              client_metadata, connector, last_report_seq, route_attempts, next_route_at, route_lease_until, cancel_requested_at,
              created_at, updated_at)
            values (${id}, 'cli_a', ${status}, ${partner}, 'att_a', 'aa', 'inv-1', 'KYC3', 'KOLA.BRVM', 'buy', 10, null, 1000, 0, '0',
              null, null, ${`sandbox-${partner}`}, 0, 0, null, null, null, 1, 1)`.execute(db);
      await insert('ord_1', 'routed', 'sgi_a');
      await insert('ord_2', 'filled', 'sgi_b');
      await insert('ord_3', 'created', 'sgi_c');
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-24T11-00-open-orders-index'), JSON.stringify(report));
      await insert('ord_4', 'partially_filled', 'sgi_d');
      await insert('ord_5', 'routed', 'sgi_a');
      await insert('ord_6', 'cancelled', 'sgi_e');
      const open = async () => (await partnersWithOpenOrders(db)).map((p) => `${p.rcpt_to} ${p.connector}`).sort();
      assert.deepEqual(await open(), ['sgi_a sandbox-sgi_a', 'sgi_d sandbox-sgi_d']);
      // An order leaves the index when it is no longer open, and enters it when it is routed.
      await db.updateTable('orders').set({ status: 'filled' }).where('id', '=', 'ord_4').execute();
      await db.updateTable('orders').set({ status: 'routed' }).where('id', '=', 'ord_3').execute();
      assert.deepEqual(await open(), ['sgi_a sandbox-sgi_a', 'sgi_c sandbox-sgi_c']);
      if (database.name === 'sqlite') {
        const query = openPartnerAfterQuery(db, 'sgi_a', 'sandbox-sgi_a').compile();
        const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
        assert.ok(
          plan.rows.some((r) => r.detail.includes('orders_open_partner')),
          plan.rows.map((r) => r.detail).join('\n'),
        );
      }
    });

    test('the order lifecycle: older orders become gtc, a cancel they waited on their pending request, their fills get ids; old journal entries replay', async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-24T15-00-deferred-delivery-listing', storage.schema);
      const insert = (id: string, status: string, cancelRequestedAt: number | null) =>
        sql`insert into orders (id, client_id, status, rcpt_to, kyc_attestation_id, kyc_attestation_sha256, subject_id, kyc_level,
              instrument, side, qty, limit_price_cents, reference_price_cents, filled_qty, fill_notional_cents, failure_reason,
              client_metadata, connector, last_report_seq, route_attempts, next_route_at, route_lease_until, cancel_requested_at,
              created_at, updated_at)
            values (${id}, 'cli_a', ${status}, 'sgi_a', 'att_a', 'aa', 'inv-1', 'KYC3', 'KOLA.BRVM', 'buy', 10, 1, 1000, 0, '0',
              null, null, 'sandbox', 1, 0, null, null, ${cancelRequestedAt}, 1, 1)`.execute(db);
      await insert('ord_open', 'routed', null);
      await insert('ord_cancelling', 'routed', 5);
      await insert('ord_cancelled', 'cancelled', 5);
      for (const seq of [2, 3]) {
        await sql`insert into order_fills (order_id, seq, report_id, fill_qty, fill_price_cents, exchange_ref, executed_at)
                  values ('ord_open', ${seq}, ${`r${seq}`}, 1, 100, 'BRVM-20261123-000001', ${Date.parse('2026-11-23T10:00:00Z') + seq})`.execute(
          db,
        );
      }
      // A sandbox partner's journal as it was written: a submit without time in force, a cancel without a payload.
      const order = {
        order_id: 'ord_01kdvdna00e5fsxhz2kkrzpb8n',
        instrument: 'KOLA.BRVM',
        instrument_status: 'active',
        side: 'buy',
        qty: 5,
        limit_price_cents: 1,
        reference_price_cents: 1_550_000,
      };
      const at = Date.parse('2026-11-23T10:00:00Z');
      await sql`insert into sandbox_journal (id, connector, kind, order_id, payload, at) values ('evt_1', 'sgi_a', 'submit', ${order.order_id}, ${JSON.stringify(order)}, ${at})`.execute(
        db,
      );
      await sql`insert into sandbox_journal (id, connector, kind, order_id, payload, at) values ('evt_2', 'sgi_a', 'cancel', ${order.order_id}, null, ${at + 1000})`.execute(
        db,
      );

      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-25T02-00-order-lifecycle'), JSON.stringify(report));
      const rows = await db
        .selectFrom('orders')
        .select([
          'id',
          'time_in_force',
          'expires_at',
          'pending_request',
          'pending_request_id',
          'cancel_request_reason',
          'cancel_reason',
          'requests_made',
        ])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        {
          id: 'ord_cancelled',
          time_in_force: 'gtc',
          expires_at: null,
          pending_request: null,
          pending_request_id: null,
          cancel_request_reason: null,
          cancel_reason: 'requested',
          requests_made: 0,
        },
        {
          id: 'ord_cancelling',
          time_in_force: 'gtc',
          expires_at: null,
          pending_request: 'pending_cancel',
          pending_request_id: 'ord_cancelling.1',
          cancel_request_reason: 'requested',
          cancel_reason: null,
          requests_made: 1,
        },
        {
          id: 'ord_open',
          time_in_force: 'gtc',
          expires_at: null,
          pending_request: null,
          pending_request_id: null,
          cancel_request_reason: null,
          cancel_reason: null,
          requests_made: 0,
        },
      ]);
      const fills = await db.selectFrom('order_fills').select(['id', 'seq']).orderBy('seq').execute();
      assert.equal(fills.length, 2);
      for (const f of fills) assert.match(f.id, /^fil_01[0-9a-hjkmnp-tv-z]{24}$/);
      assert.notEqual(fills[0]?.id, fills[1]?.id);
      await assert.rejects(sql`update order_fills set id = ${fills[0]?.id ?? ''} where seq = 3`.execute(db), 'fill ids are unique');

      const connector = new JournaledSandboxConnector('sgi_a', db, storage.transact, new ManualClock('2026-11-23T10:00:05Z'));
      const replayed = (await connector.reports(null)).reports;
      assert.deepEqual(
        replayed.map((r) => [r.type, r.type === 'cancelled' ? r.reason : null]),
        [
          ['accepted', null],
          ['cancelled', 'requested'],
        ],
      );
      assert.deepEqual(await connector.cancel(order.order_id as OrderId, { request_id: 'x.2', reason: 'requested' }), {
        status: 'cancelled',
        report: replayed[1],
      });
    });

    test("investor accounts: older orders have no account (their FIX partner's default goes with them) and older partners require nothing more", async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-25T04-00-test-clocks', storage.schema);
      await sql`insert into partners (id, name, jurisdiction, capabilities, approved_since, status, connector, fix, fix_credentials, created_at, updated_at)
                values ('sgi_a', 'A', 'UEMOA', '["equities"]', null, 'approved', 'sandbox', null, null, 1, 1)`.execute(db);
      await sql`insert into orders (id, client_id, status, rcpt_to, kyc_attestation_id, kyc_attestation_sha256, subject_id, kyc_level,
              instrument, side, qty, limit_price_cents, reference_price_cents, filled_qty, fill_notional_cents, failure_reason,
              client_metadata, connector, last_report_seq, route_attempts, next_route_at, route_lease_until, cancel_requested_at,
              created_at, updated_at)
            values ('ord_old', 'cli_a', 'routed', 'sgi_a', 'att_a', 'aa', 'inv-1', 'KYC3', 'KOLA.BRVM', 'buy', 10, 1, 1000, 0, '0',
              null, null, 'sandbox', 1, 0, null, null, null, 1, 1)`.execute(db);

      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-25T05-00-investor-accounts'), JSON.stringify(report));
      assert.deepEqual(await db.selectFrom('orders').select(['id', 'account']).execute(), [{ id: 'ord_old', account: null }]);
      assert.deepEqual(await db.selectFrom('partners').select(['id', 'checks']).execute(), [{ id: 'sgi_a', checks: null }]);
      const row = { client_id: 'cli_a', subject_id: 'inv-1', partner_id: 'sgi_a', account_number: 'CI-1', created_at: 1, updated_at: 1 };
      await db.insertInto('investor_accounts').values(row).execute();
      await assert.rejects(
        db
          .insertInto('investor_accounts')
          .values({ ...row, account_number: 'CI-2' })
          .execute(),
        'one account per client, subject and partner',
      );
    });

    test('positions: the fills applied before are built into positions, by the average-cost method, with their recent trade dates by clock', async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-25T04-00-test-clocks', storage.schema);
      await sql`insert into partners (id, name, jurisdiction, capabilities, approved_since, status, connector, created_at, updated_at)
                values ('sgi_a', 'A', 'UEMOA', '["equities"]', null, 'approved', 'sandbox', 1, 1)`.execute(db);
      const order = (id: string, subject: string, instrument: string, side: string, clock: string | null) =>
        sql`insert into orders (id, client_id, status, rcpt_to, kyc_attestation_id, kyc_attestation_sha256, subject_id, kyc_level,
              instrument, side, qty, limit_price_cents, reference_price_cents, filled_qty, fill_notional_cents, failure_reason,
              client_metadata, connector, last_report_seq, route_attempts, next_route_at, route_lease_until, cancel_requested_at,
              created_at, updated_at, time_in_force, requests_made, test_clock_id)
            values (${id}, 'cli_a', 'filled', 'sgi_a', 'att_a', 'aa', ${subject}, 'KYC3', ${instrument}, ${side}, 10, null, 100, 10, '0',
              null, null, 'sandbox', 1, 0, null, null, null, 1, 1, 'gtc', 0, ${clock})`.execute(db);
      const fill = (orderId: string, seq: number, qty: number, price: number, at: string) =>
        sql`insert into order_fills (id, order_id, seq, report_id, fill_qty, fill_price_cents, exchange_ref, executed_at)
            values (${`fil_${orderId}_${seq}`}, ${orderId}, ${seq}, ${`r_${orderId}_${seq}`}, ${qty}, ${price}, 'x', ${Date.parse(at)})`.execute(
          db,
        );
      await order('ord_1', 'inv-1', 'KOLA.BRVM', 'buy', null);
      await order('ord_2', 'inv-1', 'KOLA.BRVM', 'buy', null);
      await order('ord_3', 'inv-1', 'KOLA.BRVM', 'sell', null);
      await order('ord_4', 'inv-2', 'KOLA.BRVM', 'buy', 'clk_a');
      await fill('ord_1', 1, 10, 100, '2026-09-01T10:00:00Z');
      await fill('ord_2', 1, 4, 200, '2026-11-23T10:00:00Z');
      await fill('ord_2', 2, 6, 200, '2026-11-23T10:00:01Z');
      // Sold after the second buy though its order sorts first: fills apply in the order they executed.
      await fill('ord_3', 1, 5, 301, '2026-11-24T10:00:00Z');
      await fill('ord_4', 1, 3, 90, '2026-11-23T10:00:00Z');
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-26T03-00-positions'), JSON.stringify(report));
      const rows = await db
        .selectFrom('positions')
        .select(['subject_id', 'rcpt_to', 'instrument', 'qty', 'cost_cents', 'realised_pnl_cents', 'unsettled', 'statement_as_of'])
        .orderBy('subject_id')
        .execute();
      assert.deepEqual(rows, [
        // 20 bought for 3,000 (average 150); 5 sold at 3.01 take 750 of the cost: 755 realised.
        {
          subject_id: 'inv-1',
          rcpt_to: 'sgi_a',
          instrument: 'KOLA.BRVM',
          qty: 15,
          cost_cents: '2250',
          realised_pnl_cents: '755',
          unsettled: JSON.stringify([
            [null, '2026-11-23', 10],
            [null, '2026-11-24', -5],
          ]),
          statement_as_of: null,
        },
        {
          subject_id: 'inv-2',
          rcpt_to: 'sgi_a',
          instrument: 'KOLA.BRVM',
          qty: 3,
          cost_cents: '270',
          realised_pnl_cents: '0',
          unsettled: JSON.stringify([['clk_a', '2026-11-23', 3]]),
          statement_as_of: null,
        },
      ]);
      assert.equal((await db.selectFrom('position_books').select('subject_id').execute()).length, 2);
      assert.deepEqual(
        await db.selectFrom('partners').select(['id', 'checks']).execute(),
        [{ id: 'sgi_a', checks: null }],
        'no partner asks for a check',
      );
    });

    test('fees: fills recorded before fee schedules keep no fees, their net equal to their gross', async (t) => {
      const storage = await openUnmigratedStorage(t, database);
      const { db } = storage;
      await migrateUpTo(db, '2026-11-25T04-00-test-clocks', storage.schema);
      await sql`insert into order_fills (id, order_id, seq, report_id, fill_qty, fill_price_cents, exchange_ref, executed_at)
                values ('fil_old', 'ord_old', 2, 'r2', 3, 1000000000000, 'BRVM-20261123-000001', ${Date.parse('2026-11-23T10:00:00Z')})`.execute(
        db,
      );
      const report = await migrateToLatest(db, storage.schema);
      assert.ok(report.applied.includes('2026-11-25T07-00-fees'), JSON.stringify(report));
      const [row] = await db.selectFrom('order_fills').selectAll().execute();
      assert.ok(row);
      assert.deepEqual([row.gross_cents, row.fees, row.net_cents, row.fee_schedules], [null, null, null, null]);
      const fill = fillOf(row, 'sell', () => '2026-11-26', '2026-11-24');
      assert.deepEqual(
        [fill.gross_cents, fill.fees, fill.net_cents, fill.fee_schedules, fill.settlement_status],
        [3_000_000_000_000, [], 3_000_000_000_000, [], 'pending'],
      );
      assert.deepEqual(
        await db.selectFrom('fee_schedules').selectAll().execute(),
        [],
        'the shipped schedules are written at start, not by the migration',
      );
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DATABASES, openTestStorage } from '../../../test/support/harness.js';
import { systemClock } from '../../lib/clock.js';
import { newId, type OrderId } from '../../lib/ids.js';
import type { Storage } from '../../storage/database.js';
import { FixConnector } from './fix-connector.js';
import { insertOrderAtPartner, insertRequest, insertSessionIfMissing } from './fix.repository.js';
import type { ExecReportFields } from './mapping.js';
import type { PartnerMessage } from './partner-message.js';

const partnerId = 'sgi_01m87d936de00an5yapx4hjrmx';

function connectorOn(storage: Storage): FixConnector {
  // No runner: the messages are fed in as the session would, in its transactions.
  return new FixConnector(
    { partnerId, db: storage.db, clock: systemClock, log: pino({ level: 'silent' }), loadPartner: async () => null, answerTimeoutMs: 2000 },
    null,
  );
}

async function handedOver(storage: Storage, qty: number): Promise<OrderId> {
  const orderId = newId('order');
  const now = Date.now();
  await storage.transact(async (trx) => {
    await insertSessionIfMissing(trx, { partnerId, beginString: 'FIX.4.4', senderCompId: 'CAURI', targetCompId: 'SGI', period: null }, now);
    await insertOrderAtPartner(trx, {
      partner_id: partnerId,
      order_id: orderId,
      side: 'buy',
      qty,
      instrument: 'KOLA.BRVM',
      body: '{"ClOrdID":"x","Instrument":{"Symbol":"KOLA"},"Side":"1","OrderQtyData":{"OrderQty":10}}',
      state: 'sent',
      cum_qty: 0,
      report_seq: 0,
      partner_order_id: null,
      created_at: now,
      updated_at: now,
    });
    await insertRequest(trx, {
      partner_id: partnerId,
      cl_ord_id: orderId,
      order_id: orderId,
      kind: 'new',
      seq: 7,
      state: 'pending',
      terms: null,
      created_at: now,
    });
  });
  return orderId;
}

const execution = (orderId: string, fields: Partial<ExecReportFields>, origClOrdId: string | null = null): PartnerMessage => ({
  kind: 'execution_report',
  clOrdId: orderId,
  origClOrdId,
  report: {
    execId: 'E0',
    execType: '0',
    partnerOrderId: 'P-1',
    lastQty: null,
    lastPx: null,
    ordRejReason: null,
    text: null,
    at: Date.now(),
    ...fields,
  },
});

async function deliver(storage: Storage, connector: FixConnector, message: PartnerMessage): Promise<void> {
  const after = await storage.transact((trx) => connector.applyInbound(trx, message));
  after?.();
}

for (const database of DATABASES) {
  describe(`FIX connector's report log on ${database.name}`, () => {
    test('a partial fill delivered twice (same ExecID) is applied once; the log survives a new connector', async (t) => {
      const storage = await openTestStorage(t, database);
      const connector = connectorOn(storage);
      const orderId = await handedOver(storage, 10);
      const submitted = connector.submit({
        order_id: orderId,
        instrument: 'KOLA.BRVM',
        instrument_status: 'active',
        side: 'buy',
        qty: 10,
        limit_price_cents: 100,
        reference_price_cents: 100,
        time_in_force: 'day',
        expire_date: null,
      });
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1.5' }));
      assert.equal((await submitted).status, 'accepted', 'a repeated submit is answered with the first report');
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1.5' }));
      await deliver(storage, connector, execution(orderId, { execId: 'T2', execType: 'F', lastQty: '6', lastPx: '1.25' }));
      const first = await connector.reports(null, { limit: 2 });
      assert.deepEqual(
        first.reports.map((r) => [r.seq, r.type]),
        [
          [1, 'accepted'],
          [2, 'partial_fill'],
        ],
      );
      assert.equal(first.position, '2');
      // A connector built afresh (a restart) reads the same log from the same position.
      const rest = await connectorOn(storage).reports(first.position);
      assert.deepEqual(
        rest.reports.map((r) => [r.seq, r.type, 'cum_qty' in r ? r.cum_qty : null]),
        [[3, 'fill', 10]],
      );
      assert.equal(rest.position, '3');
      assert.deepEqual(await connector.reports(rest.position), { reports: [], position: '3' });
      assert.deepEqual((await connector.reports('not-a-position')).reports.length, 3);
    });

    test("a Reject naming the order's sequence number fails it; a cancel refused by OrderCancelReject leaves it open", async (t) => {
      const storage = await openTestStorage(t, database);
      const connector = connectorOn(storage);
      const rejected = await handedOver(storage, 10);
      await deliver(storage, connector, {
        kind: 'reject',
        level: 'session',
        refSeqNum: 7,
        refMsgType: 'D',
        refId: null,
        text: 'Value is incorrect (out of range) for this tag',
      });
      assert.deepEqual(
        (await connector.reports(null)).reports.map((r) => [r.order_id, r.type, 'reason' in r ? r.reason : null]),
        [[rejected, 'rejected', 'sgi_rejected']],
      );
      // The same Reject again (a resend) changes nothing: the request was answered.
      await deliver(storage, connector, { kind: 'reject', level: 'session', refSeqNum: 7, refMsgType: 'D', refId: null, text: 'again' });
      assert.equal((await connector.reports(null)).reports.length, 1);
      assert.deepEqual(await connector.cancel(rejected, { request_id: `${rejected}.1`, reason: 'requested' }), {
        status: 'refused',
        reason: 'already_rejected',
      });

      const open = await handedOver(storage, 10);
      await deliver(storage, connector, execution(open, { execId: 'N1' }));
      const cancelId = `${open}.1`;
      await storage.transact((trx) =>
        insertRequest(trx, {
          partner_id: partnerId,
          cl_ord_id: cancelId,
          order_id: open,
          kind: 'cancel',
          seq: 9,
          state: 'pending',
          terms: '{"reason":"requested"}',
          created_at: Date.now(),
        }),
      );
      const cancelled = connector.cancel(open, { request_id: cancelId, reason: 'requested' });
      await new Promise((resolve) => setTimeout(resolve, 100)); // the cancel reads the pending request and waits
      await deliver(storage, connector, {
        kind: 'cancel_reject',
        clOrdId: cancelId,
        origClOrdId: open,
        cxlRejReason: 0,
        cxlRejResponseTo: '1',
        text: 'Too late to cancel',
      });
      // The refusal of an open order's request is in the log; the waiting caller finds it there.
      assert.deepEqual(await cancelled, { status: 'pending' });
      assert.deepEqual(await connector.cancel(open, { request_id: cancelId, reason: 'requested' }), {
        status: 'refused',
        reason: 'partner_refused',
      });
      await deliver(storage, connector, execution(open, { execId: 'X1', execType: '4' }));
      const log = (await connector.reports(null)).reports.filter((r) => r.order_id === open);
      assert.deepEqual(
        log.map((r) => r.type),
        ['accepted', 'request_refused', 'cancelled'],
      );
      assert.deepEqual(log[1], {
        report_id: `fix:${partnerId}:${open}:2`,
        order_id: open,
        seq: 2,
        occurred_at: log[1]?.occurred_at,
        type: 'request_refused',
        request_id: cancelId,
        request: 'cancel',
        reason: 'partner_refused',
      });
      assert.deepEqual(
        [log[2]?.type === 'cancelled' && log[2].reason, log[2]?.type === 'cancelled' && log[2].request_id],
        ['partner', null],
        "a Canceled with no cancel waiting is the partner's own",
      );
      assert.deepEqual(await connector.cancel(open, { request_id: `${open}.2`, reason: 'requested' }), {
        status: 'cancelled',
        report: log[2],
      });
    });

    test('an amend answered Replaced changes the terms the next cancel repeats; a refused amend (434=2) is logged; an expiry cancel answered Canceled is expired', async (t) => {
      const storage = await openTestStorage(t, database);
      const connector = connectorOn(storage);
      const orderId = await handedOver(storage, 10);
      await deliver(storage, connector, execution(orderId, { execId: 'N1' }));
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1' }));
      const amendId = `${orderId}.1`;
      await storage.transact((trx) =>
        insertRequest(trx, {
          partner_id: partnerId,
          cl_ord_id: amendId,
          order_id: orderId,
          kind: 'amend',
          seq: 10,
          state: 'pending',
          terms: '{"qty":20,"limit_price_cents":150}',
          created_at: Date.now(),
        }),
      );
      await deliver(storage, connector, execution(amendId, { execId: 'R1', execType: '5', orderQty: '20', price: '1.5' }, orderId));
      const refusedId = `${orderId}.2`;
      await storage.transact((trx) =>
        insertRequest(trx, {
          partner_id: partnerId,
          cl_ord_id: refusedId,
          order_id: orderId,
          kind: 'amend',
          seq: 11,
          state: 'pending',
          terms: '{"qty":30,"limit_price_cents":150}',
          created_at: Date.now(),
        }),
      );
      // The reject names only the order's current ClOrdID; CxlRejResponseTo 2 says it is the amend.
      await deliver(storage, connector, {
        kind: 'cancel_reject',
        clOrdId: null,
        origClOrdId: amendId,
        cxlRejReason: 99,
        cxlRejResponseTo: '2',
        text: 'Price out of band',
      });
      const expiryId = `${orderId}.3`;
      await storage.transact((trx) =>
        insertRequest(trx, {
          partner_id: partnerId,
          cl_ord_id: expiryId,
          order_id: orderId,
          kind: 'cancel',
          seq: 12,
          state: 'pending',
          terms: '{"reason":"expired"}',
          created_at: Date.now(),
        }),
      );
      await deliver(storage, connector, execution(expiryId, { execId: 'X1', execType: '4' }, amendId));
      const log = (await connector.reports(null)).reports;
      assert.deepEqual(
        log.map((r) => r.type),
        ['accepted', 'partial_fill', 'replaced', 'request_refused', 'cancelled'],
      );
      assert.deepEqual(log[2], {
        report_id: `fix:${partnerId}:${orderId}:3`,
        order_id: orderId,
        seq: 3,
        occurred_at: log[2]?.occurred_at,
        type: 'replaced',
        request_id: amendId,
        qty: 20,
        limit_price_cents: 150,
        cum_qty: 4,
        leaves_qty: 16,
      });
      assert.deepEqual(log[3]?.type === 'request_refused' && [log[3].request_id, log[3].request, log[3].reason], [
        refusedId,
        'amend',
        'partner_refused',
      ]);
      assert.deepEqual(log[4]?.type === 'cancelled' && [log[4].reason, log[4].request_id, log[4].cancelled_qty, log[4].cum_qty], [
        'expired',
        expiryId,
        16,
        4,
      ]);
      assert.deepEqual(await connector.amend(orderId, { request_id: amendId, qty: 20 }), { status: 'replaced', report: log[2] });
      assert.deepEqual(await connector.amend(orderId, { request_id: `${orderId}.4`, qty: 25 }), {
        status: 'refused',
        reason: 'already_cancelled',
      });
    });

    test('a Rejected (150=8) whose ClOrdID is a waiting amend or cancel refuses that request, not the order, which fills on', async (t) => {
      const storage = await openTestStorage(t, database);
      const connector = connectorOn(storage);
      const orderId = await handedOver(storage, 10);
      await deliver(storage, connector, execution(orderId, { execId: 'N1' }));
      const waiting = async (suffix: number, kind: 'amend' | 'cancel', terms: string) => {
        const id = `${orderId}.${suffix}`;
        await storage.transact((trx) =>
          insertRequest(trx, {
            partner_id: partnerId,
            cl_ord_id: id,
            order_id: orderId,
            kind,
            seq: 10 + suffix,
            state: 'pending',
            terms,
            created_at: Date.now(),
          }),
        );
        return id;
      };
      const amendId = await waiting(1, 'amend', '{"qty":20,"limit_price_cents":150}');
      await deliver(
        storage,
        connector,
        execution(amendId, { execId: 'RJ1', execType: '8', ordRejReason: 99, text: 'replace not allowed' }, orderId),
      );
      const cancelId = await waiting(2, 'cancel', '{"reason":"requested"}');
      await deliver(storage, connector, execution(cancelId, { execId: 'RJ2', execType: '8', text: 'too late to cancel' }, orderId));
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1' }));
      const log = (await connector.reports(null)).reports;
      assert.deepEqual(
        log.map((r) => (r.type === 'request_refused' ? [r.type, r.request_id, r.request, r.reason] : [r.type])),
        [
          ['accepted'],
          ['request_refused', amendId, 'amend', 'partner_refused'],
          ['request_refused', cancelId, 'cancel', 'partner_refused'],
          ['partial_fill'],
        ],
      );
    });
  });
}

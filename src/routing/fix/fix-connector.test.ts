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
  return new FixConnector({ partnerId, db: storage.db, clock: systemClock, log: pino({ level: 'silent' }), loadPartner: async () => null, answerTimeoutMs: 2000 }, null);
}

async function handedOver(storage: Storage, qty: number): Promise<OrderId> {
  const orderId = newId('order');
  const now = Date.now();
  await storage.transact(async (trx) => {
    await insertSessionIfMissing(trx, { partnerId, beginString: 'FIX.4.4', senderCompId: 'CAURI', targetCompId: 'SGI', period: null }, now);
    await insertOrderAtPartner(trx, { partner_id: partnerId, order_id: orderId, side: 'buy', qty, instrument: 'KOLA.BRVM', body: '{"ClOrdID":"x","Instrument":{"Symbol":"KOLA"},"Side":"1","OrderQtyData":{"OrderQty":10}}', state: 'sent', cum_qty: 0, report_seq: 0, partner_order_id: null, created_at: now, updated_at: now });
    await insertRequest(trx, { partner_id: partnerId, cl_ord_id: orderId, order_id: orderId, kind: 'new', seq: 7, state: 'pending', created_at: now });
  });
  return orderId;
}

const execution = (orderId: string, fields: Partial<ExecReportFields>): PartnerMessage => ({
  kind: 'execution_report',
  clOrdId: orderId,
  origClOrdId: null,
  report: { execId: 'E0', execType: '0', partnerOrderId: 'P-1', lastQty: null, lastPx: null, ordRejReason: null, text: null, at: Date.now(), ...fields },
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
      const submitted = connector.submit({ order_id: orderId, instrument: 'KOLA.BRVM', instrument_status: 'active', side: 'buy', qty: 10, limit_price_cents: 100, reference_price_cents: 100 });
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1.5' }));
      assert.equal((await submitted).status, 'accepted', 'a repeated submit is answered with the first report');
      await deliver(storage, connector, execution(orderId, { execId: 'T1', execType: 'F', lastQty: '4', lastPx: '1.5' }));
      await deliver(storage, connector, execution(orderId, { execId: 'T2', execType: 'F', lastQty: '6', lastPx: '1.25' }));
      const first = await connector.reports(null, { limit: 2 });
      assert.deepEqual(first.reports.map((r) => [r.seq, r.type]), [[1, 'accepted'], [2, 'partial_fill']]);
      assert.equal(first.position, '2');
      // A connector built afresh (a restart) reads the same log from the same position.
      const rest = await connectorOn(storage).reports(first.position);
      assert.deepEqual(rest.reports.map((r) => [r.seq, r.type, 'cum_qty' in r ? r.cum_qty : null]), [[3, 'fill', 10]]);
      assert.equal(rest.position, '3');
      assert.deepEqual(await connector.reports(rest.position), { reports: [], position: '3' });
      assert.deepEqual((await connector.reports('not-a-position')).reports.length, 3);
    });

    test("a Reject naming the order's sequence number fails it; a cancel refused by OrderCancelReject leaves it open", async (t) => {
      const storage = await openTestStorage(t, database);
      const connector = connectorOn(storage);
      const rejected = await handedOver(storage, 10);
      await deliver(storage, connector, { kind: 'reject', level: 'session', refSeqNum: 7, refMsgType: 'D', refId: null, text: 'Value is incorrect (out of range) for this tag' });
      assert.deepEqual((await connector.reports(null)).reports.map((r) => [r.order_id, r.type, 'reason' in r ? r.reason : null]), [[rejected, 'rejected', 'sgi_rejected']]);
      // The same Reject again (a resend) changes nothing: the request was answered.
      await deliver(storage, connector, { kind: 'reject', level: 'session', refSeqNum: 7, refMsgType: 'D', refId: null, text: 'again' });
      assert.equal((await connector.reports(null)).reports.length, 1);
      assert.deepEqual(await connector.cancel(rejected), { status: 'refused', reason: 'already_rejected' });

      const open = await handedOver(storage, 10);
      await deliver(storage, connector, execution(open, { execId: 'N1' }));
      await storage.transact((trx) => insertRequest(trx, { partner_id: partnerId, cl_ord_id: `${open}-C1`, order_id: open, kind: 'cancel', seq: 9, state: 'pending', created_at: Date.now() }));
      const cancelled = connector.cancel(open);
      await new Promise((resolve) => setTimeout(resolve, 100)); // the cancel reads the pending request and waits
      await deliver(storage, connector, { kind: 'cancel_reject', clOrdId: `${open}-C1`, origClOrdId: open, cxlRejReason: 0, text: 'Too late to cancel' });
      assert.deepEqual(await cancelled, { status: 'refused', reason: 'partner_refused' });
      await deliver(storage, connector, execution(open, { execId: 'X1', execType: '4' }));
      const log = (await connector.reports(null)).reports.filter((r) => r.order_id === open);
      assert.deepEqual(log.map((r) => r.type), ['accepted', 'cancelled']);
      assert.deepEqual(await connector.cancel(open), { status: 'cancelled', report: log[1] });
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importFxRates } from '../../src/partners/fx-rate.service.js';
import { importInstruments } from '../../src/partners/instrument.service.js';
import { KYC2_REQUEST } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, KYC3_REQUEST, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab'); // UEMOA: equities, bonds, opcvm
const LAGUNE = sandboxPartner('lagune'); // UEMOA: junior_board among others
const VOLTA = sandboxPartner('volta'); // GHANA: equities
const KYC1_CAP = 10_000_000; // 100,000 FCFA in cents

/** The stored order row and its events, to check that a refusal changed nothing. */
async function snapshot(c: OrderContext, id: string): Promise<string> {
  const row = await c.runtime.storage.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  const events = await c.runtime.storage.db.selectFrom('events').select(['id', 'type']).where('subject_ref', '=', id).execute();
  return JSON.stringify({ row, events });
}

/** The details of a refused amend, without their messages; the order is unchanged. */
async function refusedAmend(c: OrderContext, id: string, body: Json): Promise<Json[]> {
  const before = await snapshot(c, id);
  const res = await c.post(`/v1/orders/${id}/amend`, body);
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(await snapshot(c, id), before, `${JSON.stringify(body)}: nothing stored changes`);
  return res.body.details.map(({ message: _message, ...detail }: Json) => detail);
}

/** Imports reference rates as the operator does, then lets this process see them. */
async function rates(c: OrderContext, rows: Json[]): Promise<void> {
  const report = await c.runtime.storage.db.transaction().execute((trx) => importFxRates(trx, rows, { now: c.clock.now() }));
  assert.equal(report.committed, true, JSON.stringify(report.rejected));
  c.runtime.services.reference.invalidate();
}

// An amend's new values pass the checks of a new order: the instrument's lot, tick and band, and the
// monthly cap in FCFA. Over HTTP, on both databases, from Monday 23 November 2026.
for (const database of DATABASES) {
  describe(`amend and the market rules on ${database.name}`, () => {
    test('the values an amend sends pass the lot, tick and band of the instrument now; those it leaves are not checked again', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      // SNTS.BRVM: 25,500 XOF, a 5 XOF tick, +-7.5 %: from 23,590 to 27,410 XOF. The lower limit rests.
      const snts = (
        await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'SNTS.BRVM',
          side: 'buy',
          qty: 10,
          limit_price_cents: 2_359_000,
          time_in_force: 'gtc',
        })
      ).body;
      assert.equal(snts.status, 'routed', JSON.stringify(snts));
      assert.deepEqual(await refusedAmend(c, snts.id, { limit_price_cents: 2_359_001 }), [
        { field: 'limit_price_cents', rule: 'tick_size', value: 2_359_001, tick_size_cents: 500 },
      ]);
      assert.deepEqual(await refusedAmend(c, snts.id, { limit_price_cents: 2_358_500 }), [
        { field: 'limit_price_cents', rule: 'price_band', value: 2_358_500, low_cents: 2_359_000, high_cents: 2_741_000 },
      ]);
      // Off the grid but inside the band's exact bounds (23,587.5 to 27,412.5 XOF): the tick alone.
      assert.deepEqual(await refusedAmend(c, snts.id, { limit_price_cents: 2_741_200 }), [
        { field: 'limit_price_cents', rule: 'tick_size', value: 2_741_200, tick_size_cents: 500 },
      ]);
      assert.deepEqual(
        (await refusedAmend(c, snts.id, { qty: 20, limit_price_cents: 2_741_251 })).map((d) => [d.field, d.rule]),
        [
          ['limit_price_cents', 'tick_size'],
          ['limit_price_cents', 'price_band'],
        ],
        'every broken rule is listed',
      );
      const moved = await c.post(`/v1/orders/${snts.id}/amend`, { limit_price_cents: 2_360_000 });
      assert.deepEqual([moved.status, moved.body.limit_price_cents], [200, 2_360_000], JSON.stringify(moved.body));

      // AGRTG.BRVM trades in lots of 10.
      const agrtg = (
        await c.order({
          rcpt_to: LAGUNE,
          kyc_attestation_id: att,
          instrument: 'AGRTG.BRVM',
          side: 'buy',
          qty: 20,
          limit_price_cents: 101_750,
          time_in_force: 'gtc',
        })
      ).body;
      assert.equal(agrtg.status, 'routed', JSON.stringify(agrtg));
      assert.deepEqual(await refusedAmend(c, agrtg.id, { qty: 25 }), [{ field: 'qty', rule: 'lot_size', value: 25, lot_size: 10 }]);
      assert.equal((await c.post(`/v1/orders/${agrtg.id}/amend`, { qty: 30 })).status, 200);

      // The operator moves SNTS.BRVM to a 10 XOF tick: the order's limit (23,600 XOF) is on the new
      // grid, a new one must be too; a quantity alone is not held to the price it leaves as it is.
      const imported = await c.runtime.storage.db
        .transaction()
        .execute((trx) =>
          importInstruments(
            trx,
            [{ code: 'SNTS.BRVM', class: 'equities', name: 'Sonatel', reference_price_cents: 2_550_000, tick_size_cents: 1000 }],
            { now: c.clock.now() },
          ),
        );
      assert.equal(imported.committed, true, JSON.stringify(imported.rejected));
      c.runtime.services.reference.invalidate();
      assert.deepEqual(await refusedAmend(c, snts.id, { limit_price_cents: 2_360_500 }), [
        { field: 'limit_price_cents', rule: 'tick_size', value: 2_360_500, tick_size_cents: 1000 },
      ]);
      const bigger = await c.post(`/v1/orders/${snts.id}/amend`, { qty: 15 });
      assert.deepEqual([bigger.status, bigger.body.qty, bigger.body.limit_price_cents], [200, 15, 2_360_000]);
    });

    test('an amend under a revoked or an expired attestation is 422 with the detail a new order gets; nothing stored changes', async (t) => {
      const c = await orderContext(t, database, undefined, { CAURI_ATTESTATION_VALIDITY_DAYS: '1' });
      const revoked = await c.attestation();
      const lapsing = await c.attestation({ ...KYC3_REQUEST, subject_id: 'qualified-2' });
      const gtc = { rcpt_to: BAOBAB, instrument: 'KOLA.BRVM', side: 'buy', qty: 10, limit_price_cents: KOLA_RESTING, time_in_force: 'gtc' };
      const first = (await c.order({ ...gtc, kyc_attestation_id: revoked })).body;
      const second = (await c.order({ ...gtc, kyc_attestation_id: lapsing })).body;
      for (const o of [first, second]) assert.equal(o.status, 'routed', JSON.stringify(o));
      assert.equal((await c.post(`/v1/orders/${second.id}/amend`, { qty: 20 })).status, 200, 'in force: the amend goes through');

      /** The details of a new order under `att`, then of an amend of `id` asking for `change`: the same. */
      const bothRefused = async (att: string, id: string, change: Json): Promise<Json[]> => {
        const placed = await c.order({ ...gtc, kyc_attestation_id: att });
        assert.equal(placed.res.status, 422, JSON.stringify(placed.body));
        const before = await snapshot(c, id);
        const amended = await c.post(`/v1/orders/${id}/amend`, change);
        assert.deepEqual([amended.status, amended.body.code], [422, 'validation_error'], JSON.stringify(amended.body));
        assert.deepEqual(amended.body.details, placed.body.details);
        assert.equal(await snapshot(c, id), before, 'nothing stored changes');
        return amended.body.details;
      };

      assert.equal((await c.post(`/v1/kyc/attestations/${revoked}/revoke`, {})).status, 200);
      assert.deepEqual(
        (await bothRefused(revoked, first.id, { qty: 20 })).map(({ field, rule, value }) => ({ field, rule, value })),
        [{ field: 'kyc_attestation_id', rule: 'not_revoked', value: revoked }],
      );

      c.clock.advance(24 * 3600_000);
      assert.deepEqual(
        (await bothRefused(lapsing, second.id, { limit_price_cents: KOLA_RESTING + 250 })).map(({ field, rule, value }) => ({
          field,
          rule,
          value,
        })),
        [{ field: 'kyc_attestation_id', rule: 'not_expired', value: lapsing }],
      );
      assert.deepEqual(
        (await refusedAmend(c, first.id, { limit_price_cents: 1 })).map((d) => [d.field, d.rule]),
        [
          ['limit_price_cents', 'price_band'],
          ['kyc_attestation_id', 'not_revoked'],
        ],
        'listed with the other refusals',
      );
    });

    test('under a cap an amend counts in FCFA: a cedi order at the rate of the day it was placed; a missing rate is 422 fx_rate', async (t) => {
      const c = await orderContext(t, database);
      const subject = 'cedi-1';
      const lite = await c.attestation({
        subject_id: subject,
        level: 'KYC1',
        jurisdictions: ['UEMOA', 'GHANA'],
        verifications: KYC2_REQUEST.verifications.slice(0, 2),
      });
      const qualified = await c.attestation({ ...KYC3_REQUEST, subject_id: subject, jurisdictions: ['GHANA'] });
      const gtc = { side: 'buy', time_in_force: 'gtc' };
      // MTNGH.GSE: 3.00 GHS, a one-pesewa tick, +-10 %: from 2.70 to 3.30 GHS. 2.70 rests.
      const mtn = { ...gtc, rcpt_to: VOLTA, instrument: 'MTNGH.GSE', limit_price_cents: 270 };

      // A franc order first, then a cedi order of the subject that needs no rate (KYC3 has no cap).
      const kola = (
        await c.order({
          ...gtc,
          rcpt_to: BAOBAB,
          kyc_attestation_id: lite,
          instrument: 'KOLA.BRVM',
          qty: 1,
          limit_price_cents: KOLA_RESTING,
        })
      ).body;
      assert.equal(kola.status, 'routed', JSON.stringify(kola));
      assert.equal((await c.order({ ...mtn, kyc_attestation_id: qualified, qty: 10 })).res.status, 201);
      // Raising the franc order counts the month's cedi order, which has no rate for its day.
      assert.deepEqual(await refusedAmend(c, kola.id, { qty: 2 }), [
        { field: 'instrument', rule: 'fx_rate', value: 'KOLA.BRVM', currency: 'GHS', date: '2026-11-23' },
      ]);
      // A lower limit needs no room, but the band still holds.
      assert.deepEqual(await refusedAmend(c, kola.id, { limit_price_cents: KOLA_RESTING - 250 }), [
        { field: 'limit_price_cents', rule: 'price_band', value: KOLA_RESTING - 250, low_cents: KOLA_RESTING, high_cents: 1_666_250 },
      ]);
      await rates(c, [{ date: '2026-11-23', currency: 'GHS', rate: '50' }]);
      assert.equal((await c.post(`/v1/orders/${kola.id}/amend`, { qty: 2 })).status, 200);

      // Held: KOLA 2 x 1,433,750 = 2,867,500; the KYC3 cedi order 2,700 pesewas x 50 = 135,000; this
      // one 27,000 pesewas x 50 = 1,350,000. Room left: 5,647,500 cents of FCFA.
      const cedi = (await c.order({ ...mtn, kyc_attestation_id: lite, qty: 100 })).body;
      assert.equal(cedi.status, 'routed', JSON.stringify(cedi));

      // The next day's rate differs; the order still counts at the rate of the day it was placed.
      c.clock.set('2026-11-24T10:00:00.000Z');
      await rates(c, [{ date: '2026-11-24', currency: 'GHS', rate: '60' }]);
      assert.deepEqual(await refusedAmend(c, cedi.id, { qty: 600 }), [
        {
          field: 'qty',
          rule: 'monthly_cap',
          value: 600,
          order_cents: 500 * 270 * 50,
          remaining_cents: KYC1_CAP - 2_867_500 - 135_000 - 1_350_000,
          cap_cents: KYC1_CAP,
        },
      ]);
      const fits = await c.post(`/v1/orders/${cedi.id}/amend`, { qty: 500 });
      assert.deepEqual([fits.status, fits.body.qty, fits.body.currency], [200, 500, 'GHS'], JSON.stringify(fits.body));
    });

    test('a cedi order placed months ago is amended at the rate of its day, however old that rate', async (t) => {
      const c = await orderContext(t, database, '2026-09-15T10:00:00.000Z');
      const lite = await c.attestation({
        subject_id: 'cedi-old',
        level: 'KYC1',
        jurisdictions: ['GHANA'],
        verifications: KYC2_REQUEST.verifications.slice(0, 2).map((v) => ({ ...v, verified_at: '2026-09-14T09:00:00Z' })),
      });
      await rates(c, [{ date: '2026-09-15', currency: 'GHS', rate: '50' }]);
      // MTNGH.GSE at 2.70 GHS rests: a gtc order still open in November.
      const order = { side: 'buy', time_in_force: 'gtc', rcpt_to: VOLTA, instrument: 'MTNGH.GSE', limit_price_cents: 270 };
      const placed = (await c.order({ ...order, kyc_attestation_id: lite, qty: 100 })).body;
      assert.equal(placed.status, 'routed', JSON.stringify(placed));
      c.clock.set('2026-11-23T10:00:00.000Z');
      c.runtime.services.reference.invalidate();
      // 200 x 270 x 50 = 2,700,000 cents of FCFA in September's cap, at September 15's rate (it was a
      // 422 fx_rate: rates older than the previous month were not kept in memory).
      const amended = await c.post(`/v1/orders/${placed.id}/amend`, { qty: 200 });
      assert.deepEqual([amended.status, amended.body.qty], [200, 200], JSON.stringify(amended.body));
      assert.deepEqual(await refusedAmend(c, placed.id, { qty: 800 }), [
        {
          field: 'qty',
          rule: 'monthly_cap',
          value: 800,
          order_cents: 600 * 270 * 50,
          remaining_cents: KYC1_CAP - 200 * 270 * 50,
          cap_cents: KYC1_CAP,
        },
      ]);
    });
  });
}

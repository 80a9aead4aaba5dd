import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { importFxRates } from '../../src/partners/fx-rate.service.js';
import { importInstruments } from '../../src/partners/instrument.service.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Runtime } from '../../src/app.js';

type Json = Record<string, any>;
const partner = (label: string) => {
  const p = SANDBOX_PARTNERS.find((x) => x.name.toLowerCase().startsWith(label));
  if (p?.id === undefined) throw new Error(label);
  return p.id;
};
const BAOBAB = partner('baobab'); // UEMOA: equities, bonds, opcvm
const LAGUNE = partner('lagune'); // UEMOA: equities, bonds, money_market, junior_board
const SANAGA = partner('sanaga'); // CEMAC: equities, bonds
const VOLTA = partner('volta'); // GHANA: equities, bonds, junior_board

const DAY1 = '2026-11-25';
const DAY2 = '2026-11-26';
const KYC1_CAP = 10_000_000; // 100,000 FCFA in cents
const verifications = KYC2_REQUEST.verifications.slice(0, 2);
const kyc1 = (subject: string, jurisdictions: string[]) => ({ subject_id: subject, level: 'KYC1', jurisdictions, verifications });
const kyc3 = (subject: string, jurisdictions: string[]) => ({
  ...KYC2_REQUEST,
  subject_id: subject,
  level: 'KYC3',
  jurisdictions,
  verifications: [
    ...KYC2_REQUEST.verifications,
    { type: 'source_of_funds', verified_at: '2026-11-20T09:04:00Z' },
    { type: 'pep', verified_at: '2026-11-20T09:05:00Z' },
  ],
});

interface Ctx {
  runtime: Runtime;
  base: string;
  clock: ManualClock;
  api: ApiClient;
  attestation: (body: unknown) => Promise<string>;
  order: (body: Json) => Promise<{ status: number; body: Json }>;
  /** One detail of a 422, without its message, or the status and body when the answer is not a 422. */
  refused: (body: Json) => Promise<Json>;
  orderCount: () => Promise<number>;
  /** Imports reference rates as the operator does, then lets this process see them. */
  rates: (rows: Json[]) => Promise<void>;
  /** A fresh token for the same client (tokens live 15 minutes of the manual clock). */
  renewToken: () => Promise<void>;
  fillAll: () => Promise<void>;
}

async function setup(t: import('node:test').TestContext, database: (typeof DATABASES)[number]): Promise<Ctx> {
  const clock = new ManualClock(`${DAY1}T10:00:00.000Z`);
  const runtime = await startRuntimeIn(t, testEnvironment(t, database, { CAURI_WORKERS: 'none' }, { clock }));
  const base = await listen(runtime);
  let api = await apiClient(runtime, base);
  const ctx: Ctx = {
    runtime,
    base,
    clock,
    get api() {
      return api;
    },
    attestation: async (body) => {
      const res = await api.post('/v1/kyc/attestations', body);
      assert.equal(res.status, 201);
      return ((await res.json()) as Json).id;
    },
    order: async (body) => {
      const res = await api.post('/v1/orders', body);
      return { status: res.status, body: (await res.json()) as Json };
    },
    refused: async (body) => {
      const { status, body: answer } = await ctx.order(body);
      if (status !== 422 || answer.details?.length !== 1) return { status, answer };
      assert.equal(answer.code, 'validation_error');
      assert.equal(typeof answer.details[0].message, 'string');
      const { message: _message, ...detail } = answer.details[0];
      return detail;
    },
    orderCount: async () => (await runtime.storage.db.selectFrom('orders').select('id').execute()).length,
    rates: async (rows) => {
      const report = await runtime.storage.db.transaction().execute((trx) => importFxRates(trx, rows, { now: clock.now() }));
      assert.equal(report.committed, true, JSON.stringify(report.rejected));
      runtime.services.reference.invalidate();
    },
    renewToken: async () => {
      const res = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret }),
      });
      const { access_token: token } = (await res.json()) as { access_token: string };
      const call: ApiClient['call'] = (method, path, body, headers = {}) =>
        fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      api = { ...api, token, call, post: (path, body, key = randomUUID()) => call('POST', path, body, { 'idempotency-key': key }) };
    },
    fillAll: async () => {
      for (let i = 0; i < 4; i++) {
        clock.advance(1500);
        await runtime.services.router.routeDue();
        await runtime.services.router.pollReports();
      }
    },
  };
  return ctx;
}

for (const database of DATABASES) {
  describe(`market rules at POST /v1/orders on ${database.name}`, () => {
    test('price band and tick: exactly at each limit passes, one tick past fails; lots', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation(kyc3('q-1', ['UEMOA']));
      // SNTS.BRVM: 25,500 XOF, a 5 XOF tick, +-7.5 %: from 23,590 to 27,410 XOF (rounded inwards).
      const snts = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'SNTS.BRVM', side: 'buy', qty: 1 };
      const instrument = (await (await fetch(`${c.base}/v1/instruments/SNTS.BRVM`)).json()) as Json;
      assert.deepEqual([instrument.tick_size_cents, instrument.price_band_bps, instrument.reference_price_cents], [500, 750, 2_550_000]);

      for (const [limit, side] of [
        [2_741_000, 'buy'],
        [2_359_000, 'buy'],
        [2_741_000, 'sell'],
        [2_359_000, 'sell'],
      ] as const) {
        const { status, body } = await c.order({ ...snts, side, limit_price_cents: limit });
        assert.equal(status, 201, `${side} at ${limit}: ${JSON.stringify(body)}`);
        assert.equal(body.currency, 'XOF');
      }
      const before = await c.orderCount();
      assert.deepEqual(await c.refused({ ...snts, limit_price_cents: 2_741_500 }), {
        field: 'limit_price_cents',
        rule: 'price_band',
        value: 2_741_500,
        low_cents: 2_359_000,
        high_cents: 2_741_000,
      });
      assert.deepEqual(await c.refused({ ...snts, side: 'sell', limit_price_cents: 2_358_500 }), {
        field: 'limit_price_cents',
        rule: 'price_band',
        value: 2_358_500,
        low_cents: 2_359_000,
        high_cents: 2_741_000,
      });
      assert.deepEqual(await c.refused({ ...snts, limit_price_cents: 2_550_001 }), {
        field: 'limit_price_cents',
        rule: 'tick_size',
        value: 2_550_001,
        tick_size_cents: 500,
      });
      // Off the grid inside the band's exact bounds (27,412.5 XOF included): the tick alone.
      for (const limit of [2_550_499, 2_741_200, 2_741_250, 2_358_750]) {
        const refused = await c.refused({ ...snts, limit_price_cents: limit });
        assert.deepEqual(refused, { field: 'limit_price_cents', rule: 'tick_size', value: limit, tick_size_cents: 500 }, `${limit}`);
      }

      // AGRTG.BRVM trades in lots of 10.
      const agrtg = { rcpt_to: LAGUNE, kyc_attestation_id: att, instrument: 'AGRTG.BRVM', side: 'buy' };
      assert.equal((await c.order({ ...agrtg, qty: 10 })).status, 201);
      assert.equal((await c.order({ ...agrtg, qty: 20, side: 'sell' })).status, 201);
      assert.deepEqual(await c.refused({ ...agrtg, qty: 15 }), { field: 'qty', rule: 'lot_size', value: 15, lot_size: 10 });
      assert.deepEqual(await c.refused({ ...agrtg, qty: 9, side: 'sell' }), { field: 'qty', rule: 'lot_size', value: 9, lot_size: 10 });
      // Every broken rule is named.
      const both = await c.order({ ...agrtg, qty: 11, limit_price_cents: 1 });
      assert.deepEqual(
        both.body.details.map((d: Json) => `${d.field} ${d.rule}`),
        ['qty lot_size', 'limit_price_cents price_band'],
      );
      assert.equal(await c.orderCount(), before + 2, 'refused orders store nothing');
    });

    test("the hand-over gives the partner the instrument's ISIN when the catalogue has one", async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation(kyc3('q-isin', ['UEMOA']));
      const snts = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'SNTS.BRVM',
        side: 'buy',
        qty: 1,
        limit_price_cents: 2_550_000,
      });
      const orac = await c.order({
        rcpt_to: BAOBAB,
        kyc_attestation_id: att,
        instrument: 'ORAC.BRVM',
        side: 'buy',
        qty: 1,
        limit_price_cents: 1_450_000,
      });
      assert.deepEqual([snts.status, orac.status], [201, 201]);
      const submits = await c.runtime.storage.db
        .selectFrom('sandbox_journal')
        .select(['order_id', 'payload'])
        .where('kind', '=', 'submit')
        .execute();
      const isinOf = (id: string) => (JSON.parse(submits.find((s) => s.order_id === id)?.payload ?? '{}') as Json).isin;
      assert.equal(isinOf(snts.body.id), 'SN0000000019');
      assert.equal(isinOf(orac.body.id), null);
    });

    test('a KYC1 market buy counts at the band upper limit: the cap holds whatever the simulated price does', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation(kyc1('lite-1', ['UEMOA']));
      // CBIBF.BRVM at 10,000 XOF: 10 shares at the reference price would fill the cap exactly, but a
      // market buy may fill up to 10,750 XOF, so 10 are refused and 9 are the most it can place.
      const market = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'CBIBF.BRVM', side: 'buy' };
      assert.deepEqual(await c.refused({ ...market, qty: 10 }), {
        field: 'qty',
        rule: 'monthly_cap',
        value: 10,
        order_cents: 10 * 1_075_000,
        remaining_cents: KYC1_CAP,
        cap_cents: KYC1_CAP,
      });
      const accepted: string[] = [];
      for (let i = 0; i < 12; i++) {
        const { status, body } = await c.order({ ...market, qty: 1 });
        if (status === 201) accepted.push(body.id);
        else assert.equal(body.details[0].rule, 'monthly_cap');
        c.clock.advance(37_000); // the simulated price moves between orders
      }
      assert.equal(accepted.length, 9);
      await c.fillAll();
      let filled = 0n;
      let above = 0;
      for (const id of accepted) {
        const o = (await (await c.api.call('GET', `/v1/orders/${id}`)).json()) as Json;
        assert.equal(o.status, 'filled');
        assert.ok(o.average_fill_price_cents <= 1_075_000, 'never above the band');
        assert.equal(o.average_fill_price_cents % 500, 0, 'on the tick grid');
        if (o.average_fill_price_cents > 1_000_000) above++;
        filled += BigInt(o.average_fill_price_cents);
      }
      assert.ok(above > 0, 'the price moved up for some fills');
      assert.ok(filled <= BigInt(KYC1_CAP), `filled ${filled} cents`);
      // A filled market order still counts at its worst case: nothing more fits.
      assert.equal((await c.refused({ ...market, qty: 1 })).rule, 'monthly_cap');
    });

    test('a market buy on an instrument without a band needs a limit under a cap; not without one', async (t) => {
      const c = await setup(t, database);
      const lite = await c.attestation(kyc1('lite-2', ['UEMOA']));
      const fund = { rcpt_to: BAOBAB, kyc_attestation_id: lite, instrument: 'FCPEPA.BRVM', side: 'buy', qty: 1 };
      assert.deepEqual(await c.refused(fund), { field: 'limit_price_cents', rule: 'required', value: null });
      assert.equal((await c.order({ ...fund, limit_price_cents: 1_156_000 })).status, 201);
      assert.equal((await c.order({ ...fund, side: 'sell' })).status, 201, 'a sell counts nothing');
      const qualified = await c.attestation(kyc3('q-2', ['UEMOA']));
      assert.equal((await c.order({ ...fund, kyc_attestation_id: qualified })).status, 201, 'KYC3 has no cap');
    });

    test('XOF and XAF count at par against one cap', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation(kyc1('lite-3', ['UEMOA', 'CEMAC']));
      assert.equal(
        (
          await c.order({
            rcpt_to: BAOBAB,
            kyc_attestation_id: att,
            instrument: 'SNTS.BRVM',
            side: 'buy',
            qty: 2,
            limit_price_cents: 2_700_000,
          })
        ).status,
        201,
      );
      // 5,400,000 XOF cents used; PALMC.BVMAC (XAF, one-cent tick) takes the 4,600,000 left.
      const palmc = { rcpt_to: SANAGA, kyc_attestation_id: att, instrument: 'PALMC.BVMAC', side: 'buy', qty: 1 };
      assert.deepEqual(await c.refused({ ...palmc, limit_price_cents: 4_600_001 }), {
        field: 'qty',
        rule: 'monthly_cap',
        value: 1,
        order_cents: 4_600_001,
        remaining_cents: 4_600_000,
        cap_cents: KYC1_CAP,
      });
      const exact = await c.order({ ...palmc, limit_price_cents: 4_600_000 });
      assert.equal(exact.status, 201);
      assert.equal(exact.body.currency, 'XAF');
      assert.equal((await c.refused({ ...palmc, limit_price_cents: 3_780_000 })).remaining_cents, 0);
    });

    test("a cedi order under a cap needs the day's reference rate; it counts at that rate, rounded up", async (t) => {
      const c = await setup(t, database);
      const lite = await c.attestation(kyc1('lite-4', ['GHANA', 'UEMOA']));
      // MTNGH.GSE: 3.00 GHS, a one-pesewa tick, +-10 %: from 2.70 to 3.30 GHS.
      const mtn = { rcpt_to: VOLTA, kyc_attestation_id: lite, instrument: 'MTNGH.GSE', side: 'buy', qty: 100, limit_price_cents: 300 };
      assert.deepEqual(await c.refused(mtn), { field: 'instrument', rule: 'fx_rate', value: 'MTNGH.GSE', currency: 'GHS', date: DAY1 });
      assert.deepEqual(await c.refused({ ...mtn, limit_price_cents: undefined }), {
        field: 'instrument',
        rule: 'fx_rate',
        value: 'MTNGH.GSE',
        currency: 'GHS',
        date: DAY1,
      });
      assert.equal(await c.orderCount(), 0);
      // What does not count needs no rate: a sell, or a KYC3 buy.
      const sell = await c.order({ ...mtn, side: 'sell' });
      assert.equal(sell.status, 201);
      assert.equal(sell.body.currency, 'GHS');
      const qualified = await c.attestation(kyc3('q-3', ['GHANA']));
      assert.equal((await c.order({ ...mtn, kyc_attestation_id: qualified })).status, 201);

      // 50 FCFA per cedi: the cap is 200,000 pesewas; 625 shares at 3.20 GHS reach it exactly.
      await c.rates([{ date: DAY1, currency: 'GHS', rate: '50', source: 'test' }]);
      assert.deepEqual(await c.refused({ ...mtn, qty: 626, limit_price_cents: 320 }), {
        field: 'qty',
        rule: 'monthly_cap',
        value: 626,
        order_cents: 626 * 320 * 50,
        remaining_cents: KYC1_CAP,
        cap_cents: KYC1_CAP,
      });
      assert.equal((await c.order({ ...mtn, qty: 625, limit_price_cents: 320 })).status, 201);
      assert.equal((await c.refused({ ...mtn, qty: 1, limit_price_cents: 270 })).remaining_cents, 0);

      // A rate with decimals: 601 x 3.01 GHS x 55.4012 = 10,022,132.4812 FCFA cents, counted 10,022,133.
      const other = await c.attestation(kyc1('lite-5', ['GHANA']));
      await c.rates([{ date: DAY1, currency: 'GHS', rate: '55.4012' }]);
      assert.equal((await c.refused({ ...mtn, kyc_attestation_id: other, qty: 601, limit_price_cents: 301 })).order_cents, 10_022_133);
      // A market buy counts at 3.30 GHS: 546 x 330 x 55.4012 = 9,982,188.216 -> 9,982,189 fits; 547 does not.
      assert.equal(
        (await c.refused({ ...mtn, kyc_attestation_id: other, qty: 547, limit_price_cents: undefined })).order_cents,
        10_000_471,
      );
      assert.equal((await c.order({ ...mtn, kyc_attestation_id: other, qty: 546, limit_price_cents: undefined })).status, 201);
    });

    test('each order of the month counts at the rate of its own day', async (t) => {
      const c = await setup(t, database);
      const lite = await c.attestation(kyc1('mixed', ['GHANA']));
      const qualified = await c.attestation(kyc3('mixed', ['GHANA']));
      const mtn = { rcpt_to: VOLTA, instrument: 'MTNGH.GSE', side: 'buy', limit_price_cents: 300 };
      // Day 1, no rate: the subject's KYC3 attestation buys 3,000 pesewas (nothing to count then).
      assert.equal((await c.order({ ...mtn, kyc_attestation_id: qualified, qty: 10 })).status, 201);
      assert.equal((await c.refused({ ...mtn, kyc_attestation_id: lite, qty: 1 })).date, DAY1);

      // Day 2 has a rate, but the day 1 order cannot be counted without day 1's.
      c.clock.advance(24 * 3600_000);
      await c.renewToken();
      await c.rates([{ date: DAY2, currency: 'GHS', rate: '60' }]);
      assert.deepEqual(await c.refused({ ...mtn, kyc_attestation_id: lite, qty: 1 }), {
        field: 'instrument',
        rule: 'fx_rate',
        value: 'MTNGH.GSE',
        currency: 'GHS',
        date: DAY1,
      });
      await c.rates([{ date: DAY1, currency: 'GHS', rate: '40' }]);
      // Used: 3,000 pesewas at 40 = 120,000. This order: 90,000 pesewas at 60 = 5,400,000.
      assert.equal((await c.order({ ...mtn, kyc_attestation_id: lite, qty: 300 })).status, 201);
      const over = await c.refused({ ...mtn, kyc_attestation_id: lite, qty: 300 });
      assert.deepEqual([over.rule, over.order_cents, over.remaining_cents], ['monthly_cap', 5_400_000, KYC1_CAP - 120_000 - 5_400_000]);
    });

    test('reference data is held per process: an import is seen after invalidate()', async (t) => {
      const c = await setup(t, database);
      const att = await c.attestation(kyc3('q-4', ['UEMOA']));
      const body = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'NEWCO.BRVM', side: 'buy', qty: 1 };
      assert.equal((await c.refused(body)).rule, 'exists');
      const report = await c.runtime.storage.db
        .transaction()
        .execute((trx) =>
          importInstruments(
            trx,
            [{ code: 'NEWCO.BRVM', class: 'equities', name: 'New Co', reference_price_cents: 100_000, tick_size_cents: 500 }],
            { now: c.clock.now() },
          ),
        );
      assert.equal(report.committed, true);
      assert.equal((await c.refused(body)).rule, 'exists', 'the copy in memory does not know it yet');
      c.runtime.services.reference.invalidate();
      const { status, body: order } = await c.order(body);
      assert.equal(status, 201, JSON.stringify(order));
    });

    test("another process's rate import reaches the order checks within the refresh time, even after a quiet spell", async (t) => {
      const c = await setup(t, database);
      const lite = await c.attestation(kyc1('quiet', ['GHANA']));
      const mtn = { rcpt_to: VOLTA, kyc_attestation_id: lite, instrument: 'MTNGH.GSE', side: 'buy', limit_price_cents: 300 };
      await c.rates([{ date: DAY1, currency: 'GHS', rate: '50' }]);
      assert.equal((await c.order({ ...mtn, qty: 1 })).status, 201); // 3.00 GHS at 50 FCFA: 15,000 cents
      // Another process doubles the rate, then nothing asks for the data for the refresh time (10 s).
      const double = [{ date: DAY1, currency: 'GHS', rate: '100' }];
      await c.runtime.storage.db.transaction().execute((trx) => importFxRates(trx, double, { now: c.clock.now() }));
      c.clock.advance(10_001); // at 100 FCFA, 600 more (18,000,000) exceed the cap; at 50 they fit
      const over = await c.refused({ ...mtn, qty: 600 });
      assert.deepEqual([over.rule, over.order_cents, over.remaining_cents], ['monthly_cap', 18_000_000, KYC1_CAP - 30_000]);
    });
  });
}

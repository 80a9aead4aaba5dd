import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';
import { readPdf } from '../support/pdf-text.js';
import { importExchangeFees } from '../../src/partners/fee-schedule.service.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { readShippedFees } from '../../src/partners/fee-schedule.service.js';

const BAOBAB = sandboxPartner('baobab');
const baobabRow = SANDBOX_PARTNERS.find((p) => p.id === BAOBAB);
const shippedBrvm = (readShippedFees().find((f) => f.file === 'BRVM.json')?.content as Json[])[0] as Json;

/**
 * The sandbox's published schedules, worked by hand: Baobab Titres charges 1 % with a 2,500 XOF
 * minimum; the BRVM file charges 0.15 % (exchange), 0.10 % (DC/BR), 0.05 % (regulator) and TVA 18 % on
 * the commission; every amount rounded half up to the franc (100 cents).
 */
const franc = (cents: bigint, bps: bigint) => ((2n * cents * bps + 1_000_000n) / 2_000_000n) * 100n;
function baobabOnBrvm(gross: bigint): Record<string, bigint> {
  const rate = franc(gross, 100n);
  const commission = rate > 250_000n ? rate : 250_000n;
  return {
    commission,
    exchange: franc(gross, 15n),
    depository: franc(gross, 10n),
    regulator: franc(gross, 5n),
    tax: franc(commission, 1800n),
  };
}

const byType = (fees: Json[]): Record<string, bigint> => Object.fromEntries(fees.map((f) => [f.type, BigInt(f.amount_cents)]));
const total = (fees: Json[]) => fees.reduce((sum, f) => sum + BigInt(f.amount_cents), 0n);

async function fills(c: OrderContext, id: string): Promise<Json[]> {
  const res = await c.api.call('GET', `/v1/orders/${id}/fills`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: Json[] }).data;
}

/**
 * An amount as the PDF prints it: in English thousands with commas and a decimal point, in French
 * thousands with (no-break) spaces and a decimal comma; francs whole unless there are cents.
 */
function printed(cents: bigint, currency = 'XOF', lang: 'en' | 'fr' = 'en'): string {
  const [thousands, point] = lang === 'en' ? [',', '.'] : ['\u00a0', ','];
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const units = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, thousands);
  const rest = abs % 100n;
  return `${negative ? '-' : ''}${units}${rest === 0n ? '' : `${point}${rest.toString().padStart(2, '0')}`} ${currency}`;
}

for (const database of DATABASES) {
  describe(`post-trade on ${database.name}`, () => {
    test('each fill carries the fees of the schedules in force: the minimum once per order, tax on the commission, exact net', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, side: 'buy' };
      const small = (await c.order({ ...base, instrument: 'KOLA.BRVM', qty: 10 })).body; // ~155,000 XOF: under the minimum
      const large = (await c.order({ ...base, instrument: 'CIMSN.BRVM', qty: 3000 })).body; // ~21.6 M XOF, in several fills
      const sell = (await c.order({ ...base, instrument: 'KOLA.BRVM', side: 'sell', qty: 100 })).body;
      for (let i = 0; i < 20; i++) await c.tick(1000);

      const [one] = await fills(c, small.id);
      assert.ok(one);
      const gross = BigInt(one.qty) * BigInt(one.price_cents);
      assert.equal(BigInt(one.gross_cents), gross);
      assert.deepEqual(
        one.fees.map((f: Json) => f.type),
        ['commission', 'exchange', 'depository', 'regulator', 'tax'],
      );
      assert.deepEqual(byType(one.fees), baobabOnBrvm(gross));
      assert.equal(byType(one.fees).commission, 250_000n, 'the 2,500 XOF minimum');
      assert.equal(BigInt(one.net_cents), gross + total(one.fees), 'a buy pays gross plus fees');
      assert.deepEqual(one.fee_schedules, [
        { scope: 'partner', id: BAOBAB, effective_from: '2026-01-01' },
        { scope: 'exchange', id: 'BRVM', effective_from: shippedBrvm.effective_from },
      ]);
      assert.equal(one.settlement_status, 'pending');

      const parts = await fills(c, large.id);
      assert.ok(parts.length >= 3, 'several fills');
      const orderGross = parts.reduce((sum, f) => sum + BigInt(f.gross_cents), 0n);
      const summed: Record<string, bigint> = {};
      for (const f of parts) for (const [type, amount] of Object.entries(byType(f.fees))) summed[type] = (summed[type] ?? 0n) + amount;
      assert.deepEqual(summed, baobabOnBrvm(orderGross), 'the fills together cost what one execution of the whole order costs');
      for (const f of parts) assert.equal(BigInt(f.net_cents), BigInt(f.gross_cents) + total(f.fees));

      const [sold] = await fills(c, sell.id);
      assert.ok(sold);
      assert.equal(BigInt(sold.net_cents), BigInt(sold.gross_cents) - total(sold.fees), 'a sell receives gross minus fees');
      assert.deepEqual(byType(sold.fees), baobabOnBrvm(BigInt(sold.gross_cents)));
    });

    test('schedule versions: a fill before the new effective date keeps the old one, a fill from it on uses the new; past fills never change', async (t) => {
      const c = await orderContext(t, database); // Monday 23 November
      const att = await c.attestation();
      const order = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 100 };
      const monday = (await c.order(order)).body;
      await c.tick(1500);
      const before = await fills(c, monday.id);

      const db = c.runtime.storage.db;
      const now = c.clock.now();
      const exchange = await db.transaction().execute((trx) =>
        importExchangeFees(
          trx,
          {
            ...shippedBrvm,
            effective_from: '2026-11-24',
            components: [{ type: 'exchange', name: 'BRVM trading commission', rate_bps: 20, rounding: { increment_cents: 100 } }],
          },
          { now },
        ),
      );
      assert.deepEqual([exchange.committed, exchange.applied], [true, [{ index: 0, id: 'BRVM 2026-11-24', action: 'created' }]]);
      const partner = await db.transaction().execute((trx) =>
        importPartners(
          trx,
          [
            {
              ...baobabRow,
              fees: [{ effective_from: '2026-11-24', source: 'new tariff', commission: { rate_bps: 150, minimum_cents: 0 } }],
            },
          ],
          { now },
        ),
      );
      assert.equal(partner.committed, true, JSON.stringify(partner.rejected));

      assert.deepEqual(await fills(c, monday.id), before, 'a fill applied keeps its fees');
      const stillMonday = (await c.order(order)).body;
      await c.tick(1500);
      const [old] = await fills(c, stillMonday.id);
      assert.deepEqual(
        old?.fee_schedules.map((s: Json) => s.effective_from),
        ['2026-01-01', shippedBrvm.effective_from],
        'the trade date decides',
      );

      c.clock.set('2026-11-24T10:00:00.000Z');
      const tuesday = (await c.order(order)).body;
      await c.tick(1500);
      const [fresh] = await fills(c, tuesday.id);
      assert.ok(fresh);
      const gross = BigInt(fresh.gross_cents);
      assert.deepEqual(fresh.fee_schedules, [
        { scope: 'partner', id: BAOBAB, effective_from: '2026-11-24' },
        { scope: 'exchange', id: 'BRVM', effective_from: '2026-11-24' },
      ]);
      // 1.5 % to the cent (the version states no rounding: half up, one cent), 0.20 % to the franc, the shipped tax.
      const commission = (gross * 150n * 2n + 10_000n) / 20_000n;
      assert.deepEqual(byType(fresh.fees), { commission, exchange: franc(gross, 20n), tax: franc(commission, 1800n) });
      assert.deepEqual(await fills(c, monday.id), before);
    });

    test('settlement: the date skips weekends and holidays, and the status moves on that date by the service clock and by a test clock', async (t) => {
      const c = await orderContext(t, database, '2026-11-27T10:00:00.000Z'); // a Friday
      const att = await c.attestation();
      const order = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 };
      const friday = (await c.order(order)).body;
      await c.tick(1500);
      const status = async (id: string) => (await fills(c, id)).map((f) => [f.settlement_date, f.settlement_status]);
      assert.deepEqual(await status(friday.id), [['2026-12-02', 'pending']], 'Friday T+3: Wednesday, over the weekend');

      // A test clock on Wednesday 23 December: the 24th is an eve (open), the 25th Christmas, then a weekend.
      const clock = await c.post('/v1/test-clocks', { frozen_time: '2026-12-23T10:00:00.000Z' });
      assert.equal(clock.status, 201, JSON.stringify(clock.body));
      const onClock = (await c.order({ ...order, test_clock: clock.body.id })).body;
      const advance = async (to: string) =>
        assert.equal((await c.post(`/v1/test-clocks/${clock.body.id}/advance`, { frozen_time: to })).status, 200);
      await advance('2026-12-23T10:00:05.000Z');
      assert.deepEqual(await status(onClock.id), [['2026-12-29', 'pending']], 'the 24th, the 28th, the 29th');
      await advance('2026-12-28T23:59:59.999Z');
      assert.deepEqual(await status(onClock.id), [['2026-12-29', 'pending']]);
      await advance('2026-12-29T00:00:00.000Z');
      assert.deepEqual(await status(onClock.id), [['2026-12-29', 'settled']], "settled on the date, by the order's clock");
      assert.deepEqual(await status(friday.id), [['2026-12-02', 'pending']], 'the service clock has not moved');

      c.clock.set('2026-12-01T23:59:59.999Z');
      assert.deepEqual(await status(friday.id), [['2026-12-02', 'pending']]);
      c.clock.set('2026-12-02T00:00:00.000Z');
      assert.deepEqual(await status(friday.id), [['2026-12-02', 'settled']]);
    });

    test('contract note: 409 before a fill, then the JSON note and the same note as a PDF whose text reads back', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const resting = (
        await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 5,
          limit_price_cents: KOLA_RESTING,
        })
      ).body;
      const unfilled = await c.api.call('GET', `/v1/orders/${resting.id}/contract-note`);
      assert.equal(unfilled.status, 409);
      assert.equal(((await unfilled.json()) as Json).code, 'conflict');
      assert.equal((await c.api.call('GET', '/v1/orders/ord_nope/contract-note')).status, 404);

      const buy = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'CIMSN.BRVM', side: 'buy', qty: 3000 })).body;
      for (let i = 0; i < 12; i++) await c.tick(1000);
      const orderFills = await fills(c, buy.id);
      const res = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const note = (await res.json()) as Json;
      assert.deepEqual(Object.keys(note), [
        'order_id',
        'generated_at',
        'partner',
        'subject_id',
        'account',
        'kyc_attestation_id',
        'instrument',
        'side',
        'currency',
        'order_qty',
        'limit_price_cents',
        'order_status',
        'order_created_at',
        'filled_qty',
        'average_price_cents',
        'trade_date',
        'settlement_date',
        'settlement_status',
        'fills',
        'gross_cents',
        'fees',
        'fees_total_cents',
        'net_cents',
        'fee_schedules',
      ]);
      assert.deepEqual(note.partner, { id: BAOBAB, name: 'Baobab Titres (sandbox)', jurisdiction: 'UEMOA' });
      assert.deepEqual(
        [note.subject_id, note.account, note.kyc_attestation_id, note.side, note.currency],
        ['qualified-1', null, att, 'buy', 'XOF'],
      );
      assert.deepEqual(note.instrument, { code: 'CIMSN.BRVM', name: 'Ciments du Sine (synthetic)', isin: null, exchange: 'BRVM' });
      assert.deepEqual(note.fills, orderFills);
      const gross = orderFills.reduce((sum, f) => sum + BigInt(f.gross_cents), 0n);
      assert.equal(BigInt(note.gross_cents), gross);
      assert.deepEqual(byType(note.fees), baobabOnBrvm(gross));
      assert.equal(BigInt(note.fees_total_cents), total(note.fees));
      assert.equal(BigInt(note.net_cents), gross + total(note.fees));
      assert.deepEqual([note.filled_qty, note.order_qty, note.order_status], [3000, 3000, 'filled']);
      assert.equal(note.average_price_cents, (await c.get(buy.id)).average_fill_price_cents);
      assert.deepEqual([note.trade_date, note.settlement_date, note.settlement_status], ['2026-11-23', '2026-11-26', 'pending']);
      assert.equal(note.fee_schedules.length, 2);

      const pdf = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=en`, undefined, { accept: 'application/pdf' });
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers.get('content-type'), 'application/pdf');
      assert.equal(pdf.headers.get('content-language'), 'en');
      assert.match(pdf.headers.get('content-disposition') ?? '', new RegExp(`contract-note-${buy.id}\\.pdf`));
      const bytes = new Uint8Array(await pdf.arrayBuffer());
      assert.equal(Buffer.from(bytes.subarray(0, 5)).toString(), '%PDF-');
      const read = await readPdf(bytes);
      assert.equal(read.pages, 1);
      const text = read.text.join('\n');
      for (const expected of [
        'Contract note',
        'Baobab Titres (sandbox)',
        BAOBAB,
        'qualified-1',
        'Account with the broker not registered',
        buy.id,
        'CIMSN.BRVM - Ciments du Sine (synthetic)',
        'Purchase 3,000 of 3,000 ordered',
        'Trade date 23 November 2026',
        'Settlement date 26 November 2026 (to be settled)',
        `Gross amount ${printed(gross)}`,
        `Brokerage commission ${printed(byType(note.fees).commission as bigint)}`,
        `Tax on fees ${printed(byType(note.fees).tax as bigint)}`,
        `Total fees and taxes ${printed(total(note.fees))}`,
        `Net amount payable ${printed(BigInt(note.net_cents))}`,
        "broker's commission, version in force from 2026-01-01",
      ]) {
        assert.ok(text.includes(expected), `the PDF says "${expected}":\n${text}`);
      }
      for (const f of orderFills) {
        assert.ok(text.includes(`Exchange reference: ${f.exchange_ref}`), f.exchange_ref);
        assert.ok(text.includes(`${printed(BigInt(f.gross_cents))}`));
      }
      assert.equal(read.info.Title, `Contract note ${buy.id}`);
      assert.equal(read.info.Author, 'Baobab Titres (sandbox)');

      // JSON unless the PDF is preferred; the PDF of the same note is the same document.
      const preferJson = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note`, undefined, {
        accept: 'application/json, application/pdf;q=0.5',
      });
      assert.match(preferJson.headers.get('content-type') ?? '', /^application\/json/);
      const refused = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note`, undefined, { accept: 'application/pdf;q=0' });
      assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
      const again = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=en`, undefined, {
        accept: 'text/html, application/pdf;q=0.9',
      });
      assert.equal(again.headers.get('content-type'), 'application/pdf');
      assert.deepEqual(new Uint8Array(await again.arrayBuffer()), bytes, 'same note, same clock: same bytes');

      // Another client's order is unknown; reading needs orders:read.
      const stranger = await apiClient(c.runtime, c.base, undefined, 'stranger');
      assert.equal((await stranger.call('GET', `/v1/orders/${buy.id}/contract-note`)).status, 404);
      const writer = await apiClient(c.runtime, c.base, ['orders:write'], 'writer only');
      assert.equal((await writer.call('GET', `/v1/orders/${buy.id}/contract-note`)).status, 403);
    });

    test("a sell's contract note: net receivable, the investor's account the order carried, and the PDF says so", async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const subject = ((await (await c.api.call('GET', `/v1/kyc/attestations/${att}`)).json()) as Json).subject_id as string;
      const registered = await c.api.call('PUT', `/v1/subjects/${subject}/accounts/${BAOBAB}`, { account_number: 'CI-BAOBAB-0077' });
      assert.equal(registered.status, 201, await registered.clone().text());
      const sell = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'sell', qty: 10 })).body;
      // A later change of the registration does not reach the order, nor its note.
      await c.api.call('PUT', `/v1/subjects/${subject}/accounts/${BAOBAB}`, { account_number: 'CI-BAOBAB-0078' });
      await c.tick(1500);
      const note = (await (await c.api.call('GET', `/v1/orders/${sell.id}/contract-note`)).json()) as Json;
      assert.equal(BigInt(note.net_cents), BigInt(note.gross_cents) - BigInt(note.fees_total_cents));
      assert.equal(note.account, 'CI-BAOBAB-0077');
      const text = (
        await readPdf(
          new Uint8Array(
            await (
              await c.api.call('GET', `/v1/orders/${sell.id}/contract-note?lang=en`, undefined, { accept: 'application/pdf' })
            ).arrayBuffer(),
          ),
        )
      ).text.join('\n');
      assert.ok(text.includes(`Net amount receivable ${printed(BigInt(note.net_cents))}`), text);
      assert.ok(text.includes('Sale 10 of 10 ordered'), text);
      assert.ok(text.includes('CI-BAOBAB-0077'), text);
    });

    test("a BRVM partner's contract note is in French by default (avis d'opéré), in English on request, and a bad lang is refused", async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const buy = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'CIMSN.BRVM', side: 'buy', qty: 3000 })).body;
      for (let i = 0; i < 12; i++) await c.tick(1000);
      const json = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=fr`);
      assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(json.headers.get('content-language'), null, 'the JSON is not localised');
      const note = (await json.json()) as Json;
      assert.deepEqual(note.partner, { id: BAOBAB, name: 'Baobab Titres (sandbox)', jurisdiction: 'UEMOA' });

      const pdf = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note`, undefined, { accept: 'application/pdf' });
      assert.equal(pdf.status, 200);
      assert.equal(pdf.headers.get('content-language'), 'fr');
      const bytes = new Uint8Array(await pdf.arrayBuffer());
      const read = await readPdf(bytes);
      // PDF.js reads the no-break space back as a space.
      const plain = (text: string) => text.replace(/\u00a0/g, ' ');
      const text = plain(read.text.join('\n'));
      for (const expected of [
        "Avis d'opéré",
        "Compte chez l'intermédiaire non enregistré",
        'Achat 3\u00a0000 exécutés sur 3\u00a0000 demandés',
        'Date de négociation 23 novembre 2026',
        'Date de règlement-livraison 26 novembre 2026 (à dénouer)',
        `Montant brut ${printed(BigInt(note.gross_cents), 'XOF', 'fr')}`,
        `Frais de courtage ${printed(byType(note.fees).commission as bigint, 'XOF', 'fr')}`,
        `Total des frais et taxes ${printed(total(note.fees), 'XOF', 'fr')}`,
        `Montant net à payer ${printed(BigInt(note.net_cents), 'XOF', 'fr')}`,
        "commission de l'intermédiaire, version en vigueur depuis le 2026-01-01",
        'Page 1 sur 1',
      ]) {
        assert.ok(text.includes(plain(expected)), `the PDF says "${expected}":\n${text}`);
      }
      for (const english of ['Contract note', 'Brokerage commission', 'Settlement date']) assert.ok(!text.includes(english), english);
      assert.equal(read.info.Title, `Avis d'opéré ${buy.id}`);
      const named = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=fr`, undefined, { accept: 'application/pdf' });
      assert.deepEqual(new Uint8Array(await named.arrayBuffer()), bytes, 'lang=fr is the default for this partner');
      const english = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=en`, undefined, { accept: 'application/pdf' });
      assert.equal(english.headers.get('content-language'), 'en');
      assert.ok((await readPdf(new Uint8Array(await english.arrayBuffer()))).text.join('\n').includes('Contract note'));

      for (const bad of ['de', 'FR', '']) {
        const refused = await c.api.call('GET', `/v1/orders/${buy.id}/contract-note?lang=${bad}`, undefined, { accept: 'application/pdf' });
        assert.equal(refused.status, 422, bad);
        const body = (await refused.json()) as Json;
        assert.equal(body.code, 'validation_error');
        assert.ok(
          (body.details as Json[]).some((d) => d.field === 'lang' && d.rule === 'enum'),
          JSON.stringify(body),
        );
      }
    });
  });
}

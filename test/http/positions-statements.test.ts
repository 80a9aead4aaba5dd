import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { apiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { orderContext, type Json } from '../support/order-context.js';
import { BAOBAB, SUBJECT, fillsOf, half, positions, referencePrice, stored } from './positions-support.js';

for (const database of DATABASES) {
  describe(`position statements on ${database.name}`, () => {
    test('statements: the first compared with the fills settled by its date, the next with the previous plus the fills settled since; breaks and position.break', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      const base = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM' };
      const hook = await c.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['position.break'] });
      assert.deepEqual([hook.status, hook.body.events], [201, ['position.break']], 'subscribable like the other events');

      const buy = (await c.order({ ...base, side: 'buy', qty: 10 })).body;
      await c.tick(1500);
      const [bought] = await fillsOf(c, buy.id);
      // Friday before: the SGI's statement of what it held then; Monday's buy settles after it.
      const opening = {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-20',
        holdings: [
          { instrument: 'KOLA.BRVM', qty: 100, average_cost_cents: 1_500_000 },
          { instrument: 'ORAC.BRVM', qty: 40, average_cost_cents: 1_450_000 },
        ],
      };
      const key = randomUUID();
      const first = await c.post('/v1/positions/statements', opening, key);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.match(first.body.id, /^stm_[0-9a-z]{26}$/);
      assert.deepEqual(
        { ...first.body, id: undefined, created_at: undefined },
        {
          ...opening,
          id: undefined,
          created_at: undefined,
          previous_statement_id: null,
          replaces: null,
          replaced_by: null,
          breaks: [
            { instrument: 'KOLA.BRVM', statement_qty: 100, expected_qty: 0, difference_qty: 100 },
            { instrument: 'ORAC.BRVM', statement_qty: 40, expected_qty: 0, difference_qty: 40 },
          ],
        },
      );
      const replay = await c.post('/v1/positions/statements', opening, key);
      assert.deepEqual([replay.status, replay.replayed, replay.body], [201, true, first.body]);
      assert.equal(
        (await c.post('/v1/positions/statements', { ...opening, as_of: '2026-11-19' }, key)).status,
        422,
        'the key reused with another body',
      );

      const kolaCost = 100n * 1_500_000n + 10n * BigInt(bought?.price_cents);
      let [kola, orac] = await positions(c, `?subject_id=${SUBJECT}`);
      assert.deepEqual(
        [kola?.instrument, kola?.qty, kola?.settled_qty, kola?.average_cost_cents, kola?.realised_pnl_cents, kola?.statement_as_of],
        ['KOLA.BRVM', 110, 100, Number(half(kolaCost, 110n)), 0, '2026-11-20'],
      );
      assert.deepEqual(
        [orac?.instrument, orac?.qty, orac?.settled_qty, orac?.average_cost_cents, orac?.statement_as_of],
        ['ORAC.BRVM', 40, 40, 1_450_000, '2026-11-20'],
      );
      assert.equal(orac?.unrealised_pnl_cents, 40 * ((await referencePrice(c, 'ORAC.BRVM')) - 1_450_000));

      const sell = (await c.order({ ...base, side: 'sell', qty: 30 })).body;
      await c.tick(1500);
      const [sold] = await fillsOf(c, sell.id);
      [kola] = await positions(c, '?instrument=KOLA.BRVM');
      assert.equal(kola?.qty, 80);
      assert.equal(kola?.realised_pnl_cents, Number(30n * BigInt(sold?.price_cents) - half(kolaCost * 30n, 110n)));

      // Thursday's statement: Monday's trades settled that day. The SGI shows 5 ORAC fewer.
      c.clock.set('2026-11-27T09:00:00.000Z');
      const thursday = {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-26',
        holdings: [
          { instrument: 'KOLA.BRVM', qty: 80, average_cost_cents: 1_505_000 },
          { instrument: 'ORAC.BRVM', qty: 35, average_cost_cents: 1_450_000 },
        ],
      };
      const second = await c.post('/v1/positions/statements', thursday);
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.deepEqual([second.body.previous_statement_id, second.body.replaces], [first.body.id, null]);
      assert.deepEqual(second.body.breaks, [{ instrument: 'ORAC.BRVM', statement_qty: 35, expected_qty: 40, difference_qty: -5 }]);
      [kola, orac] = await positions(c);
      assert.deepEqual(
        [kola?.qty, kola?.settled_qty, kola?.average_cost_cents, kola?.realised_pnl_cents, kola?.statement_as_of],
        [80, 80, 1_505_000, 0, '2026-11-26'],
        'the statement is the new start',
      );
      assert.deepEqual([orac?.qty, orac?.settled_qty], [35, 35]);

      const events = await c.events('position.break');
      assert.equal(events.length, 2, 'one event per statement with breaks; none for the replay');
      assert.deepEqual(events[1], {
        statement_id: second.body.id,
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-26',
        previous_statement_id: first.body.id,
        breaks: second.body.breaks,
      });
      const ids = (await c.runtime.storage.db.selectFrom('events').select('id').where('type', '=', 'position.break').execute()).map(
        (e) => e.id,
      );
      const queued = await c.runtime.storage.db.selectFrom('event_queue').select('event_id').where('event_id', 'in', ids).execute();
      assert.equal(queued.length, 2, 'each queued for the webhook fan-out, with its statement');

      // A correction of Thursday's statement agrees; a statement dated before it is refused.
      c.clock.advance(1);
      const corrected = await c.post('/v1/positions/statements', {
        ...thursday,
        holdings: [thursday.holdings[0], { ...thursday.holdings[1], qty: 40 }],
      });
      assert.deepEqual(
        [corrected.status, corrected.body.previous_statement_id, corrected.body.replaces, corrected.body.breaks],
        [201, first.body.id, second.body.id, []],
      );
      assert.equal((await c.events('position.break')).length, 2);
      assert.equal((await positions(c, '?instrument=ORAC.BRVM'))[0]?.qty, 40);
      const before = await stored(c);
      const late = await c.post('/v1/positions/statements', { ...thursday, as_of: '2026-11-25' });
      assert.equal(late.status, 422);
      assert.deepEqual(
        [late.body.details[0].field, late.body.details[0].rule, late.body.details[0].latest_as_of],
        ['as_of', 'not_before_latest', '2026-11-26'],
      );
      assert.equal(await stored(c), before, 'nothing stored changes');
      // Friday's statement is compared with the correction, not with the statement it replaced.
      c.clock.advance(1);
      const friday = await c.post('/v1/positions/statements', {
        ...thursday,
        as_of: '2026-11-27',
        holdings: [thursday.holdings[0], { ...thursday.holdings[1], qty: 40 }],
      });
      assert.deepEqual([friday.status, friday.body.previous_statement_id, friday.body.breaks], [201, corrected.body.id, []]);

      // Reads: one statement with its breaks, and the list newest first.
      const read = await c.api.call('GET', `/v1/positions/statements/${second.body.id}`);
      assert.deepEqual([read.status, await read.json()], [200, { ...second.body, replaced_by: corrected.body.id }]);
      const listed = (
        (await (await c.api.call('GET', `/v1/positions/statements?subject_id=${SUBJECT}&rcpt_to=${BAOBAB}`)).json()) as { data: Json[] }
      ).data;
      assert.deepEqual(
        listed.map((s) => s.id),
        [friday.body.id, corrected.body.id, second.body.id, first.body.id],
      );
      assert.equal((await c.api.call('GET', '/v1/positions/statements/stm_01kdvdna00zzzzzzzzzzzzzzzz')).status, 404);
    });

    test('a statement holds the fills that settle by its date: a fill read late changes nothing, later fills count on top', async (t) => {
      const c = await orderContext(t, database);
      const att = await c.attestation();
      // Filled at the partner, not yet read by the router.
      const early = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 })).body;
      c.clock.set('2026-11-27T09:00:00.000Z');
      const thursday = await c.post('/v1/positions/statements', {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-26',
        holdings: [{ instrument: 'KOLA.BRVM', qty: 10, average_cost_cents: 1_540_000 }],
      });
      assert.deepEqual(
        [thursday.status, thursday.body.breaks],
        [201, [{ instrument: 'KOLA.BRVM', statement_qty: 10, expected_qty: 0, difference_qty: 10 }]],
      );
      await c.tick(1000);
      assert.equal((await c.get(early.id)).status, 'filled');
      const [kola] = await positions(c);
      assert.deepEqual(
        [kola?.qty, kola?.average_cost_cents],
        [10, 1_540_000],
        "Monday's fill settled on Thursday: in the statement already",
      );
      await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 5 });
      await c.tick(1500);
      assert.deepEqual([(await positions(c))[0]?.qty, (await positions(c))[0]?.settled_qty], [15, 10]);
    });

    test('bad statements are 422 naming the field, and store nothing', async (t) => {
      const c = await orderContext(t, database);
      const good = {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-20',
        holdings: [{ instrument: 'KOLA.BRVM', qty: 10, average_cost_cents: 1_500_000 }],
      };
      const line = (extra: Json) => ({ ...good, holdings: [{ ...good.holdings[0], ...extra }] });
      const cases: [string, unknown, string, string][] = [
        ['unknown instrument', line({ instrument: 'NOPE.BRVM' }), 'holdings.0.instrument', 'exists'],
        ['malformed instrument', line({ instrument: 'kola' }), 'holdings.0.instrument', 'pattern'],
        ["outside the partner's jurisdiction", line({ instrument: 'GOLDF.GSE' }), 'holdings.0.instrument', 'partner_jurisdiction'],
        ['negative quantity', line({ qty: -1 }), 'holdings.0.qty', 'minimum'],
        ['fractional quantity', line({ qty: 1.5 }), 'holdings.0.qty', 'type'],
        ['negative average cost', line({ average_cost_cents: -5 }), 'holdings.0.average_cost_cents', 'minimum'],
        ['average cost missing', { ...good, holdings: [{ instrument: 'KOLA.BRVM', qty: 1 }] }, 'holdings.0.average_cost_cents', 'required'],
        ['the same instrument twice', { ...good, holdings: [good.holdings[0], good.holdings[0]] }, 'holdings.1.instrument', 'unique'],
        ['a future date', { ...good, as_of: '2026-11-24' }, 'as_of', 'not_in_future'],
        ['not a date', { ...good, as_of: '2026-02-30' }, 'as_of', 'format'],
        ['unknown partner', { ...good, rcpt_to: 'sgi_01kdvdna00zzzzzzzzzzzzzzzz' }, 'rcpt_to', 'exists'],
        ['malformed subject', { ...good, subject_id: 'has space' }, 'subject_id', 'pattern'],
        ['unknown member', { ...good, note: 'x' }, 'note', 'additionalProperties'],
        ['holdings missing', { subject_id: SUBJECT, rcpt_to: BAOBAB, as_of: '2026-11-20' }, 'holdings', 'required'],
      ];
      const before = await stored(c);
      for (const [name, body, field, rule] of cases) {
        const res = await c.post('/v1/positions/statements', body);
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'validation_error');
        assert.ok(
          res.body.details.some((d: Json) => d.field === field && d.rule === rule),
          `${name}: ${JSON.stringify(res.body.details)}`,
        );
      }
      const noKey = await c.api.call('POST', '/v1/positions/statements', good);
      assert.equal(noKey.status, 422);
      const port = (c.runtime.app.server.address() as { port: number }).port;
      const reader = await apiClient(c.runtime, `http://127.0.0.1:${port}`, ['orders:read'], 'reader');
      assert.equal((await reader.post('/v1/positions/statements', good)).status, 403, 'orders:write is needed');
      assert.equal(await stored(c), before, 'no refusal stored anything');
      assert.equal((await c.post('/v1/positions/statements', good)).status, 201, 'the good statement passes');
    });

    test('a statement at the largest holding and average cost is listed with its values exact, beyond 2^53', async (t) => {
      const c = await orderContext(t, database);
      const qty = 1_000_000_000_000;
      const cost = 1_000_000_000_000;
      const statement = {
        subject_id: SUBJECT,
        rcpt_to: BAOBAB,
        as_of: '2026-11-20',
        holdings: [{ instrument: 'KOLA.BRVM', qty, average_cost_cents: cost }],
      };
      const made = await c.post('/v1/positions/statements', statement);
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const res = await c.api.call('GET', `/v1/positions?subject_id=${SUBJECT}`);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      // Read as text: JSON.parse would round these integers to the nearest double.
      const price = BigInt(await referencePrice(c, 'KOLA.BRVM'));
      const market = BigInt(qty) * price;
      assert.ok(market > BigInt(Number.MAX_SAFE_INTEGER));
      assert.ok(text.includes(`"market_value_cents":${market}`), text);
      assert.ok(text.includes(`"unrealised_pnl_cents":${market - BigInt(qty) * BigInt(cost)}`), text);
      assert.ok(text.includes(`"average_cost_cents":${cost}`), text);
    });
  });
}

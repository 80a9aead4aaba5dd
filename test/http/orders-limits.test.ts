import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { BAOBAB, KYC1, KYC3, NIGER, SAHEL, VOLTA, setup, type Json } from './orders-support.js';

for (const database of DATABASES) {
  describe(`order limits on ${database.name}`, () => {
    test('bad input: each a 422 naming the field and the rule; nothing stored', async (t) => {
      const c = await setup(t, database, { CAURI_ATTESTATION_VALIDITY_DAYS: '1' });
      const att = await c.attestation();
      const uemoaOnly = await c.attestation({ ...KYC2_REQUEST, subject_id: 'u-1' });
      const revoked = await c.attestation({ ...KYC2_REQUEST, subject_id: 'r-1' });
      await c.api.post(`/v1/kyc/attestations/${revoked}/revoke`, {});
      const base = `http://127.0.0.1:${(c.runtime.app.server.address() as { port: number }).port}`;
      const other = await apiClient(c.runtime, base, undefined, 'other');
      const othersAttestation = ((await (await other.post('/v1/kyc/attestations', KYC3)).json()) as Json).id;
      const good = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 };
      const cases: [string, Json, string, string][] = [
        ['qty 0', { ...good, qty: 0 }, 'qty', 'minimum'],
        ['qty 1.5', { ...good, qty: 1.5 }, 'qty', 'type'],
        ['qty "10"', { ...good, qty: '10' }, 'qty', 'type'],
        ['qty over the maximum', { ...good, qty: 1_000_000_001 }, 'qty', 'maximum'],
        ['limit 0', { ...good, limit_price_cents: 0 }, 'limit_price_cents', 'minimum'],
        ['limit negative', { ...good, limit_price_cents: -5 }, 'limit_price_cents', 'minimum'],
        ['side hold', { ...good, side: 'hold' }, 'side', 'enum'],
        ['instrument sonatel', { ...good, instrument: 'sonatel' }, 'instrument', 'pattern'],
        ['unknown instrument', { ...good, instrument: 'NOPE.BRVM' }, 'instrument', 'exists'],
        ['instrument outside the partner jurisdiction', { ...good, instrument: 'PALMC.BVMAC' }, 'instrument', 'partner_jurisdiction'],
        ['unknown partner', { ...good, rcpt_to: 'sgi_01kdvdna00zzzzzzzzzzzzzzzz' }, 'rcpt_to', 'exists'],
        ['unapproved partner', { ...good, rcpt_to: NIGER }, 'rcpt_to', 'approved'],
        ['partner without the class', { ...good, rcpt_to: SAHEL }, 'instrument', 'partner_capability'],
        ['unknown attestation', { ...good, kyc_attestation_id: 'att_01kdvdna00zzzzzzzzzzzzzzzz' }, 'kyc_attestation_id', 'exists'],
        ["another client's attestation", { ...good, kyc_attestation_id: othersAttestation }, 'kyc_attestation_id', 'exists'],
        ['revoked attestation', { ...good, kyc_attestation_id: revoked }, 'kyc_attestation_id', 'not_revoked'],
        [
          'jurisdiction not listed',
          { ...good, kyc_attestation_id: uemoaOnly, rcpt_to: VOLTA, instrument: 'GOLDF.GSE' },
          'kyc_attestation_id',
          'jurisdiction',
        ],
        ['metadata too large', { ...good, client_metadata: { blob: 'x'.repeat(9000) } }, 'client_metadata', 'maxBytes'],
        ['metadata too deep', { ...good, client_metadata: { a: { b: { c: { d: { e: { f: 1 } } } } } } }, 'client_metadata', 'maxDepth'],
        [
          'metadata too many members',
          { ...good, client_metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
          'client_metadata',
          'maxProperties',
        ],
        ['unknown member', { ...good, urgency: 'high' }, 'urgency', 'additionalProperties'],
      ];
      for (const [name, body, field, rule] of cases) {
        const { res, body: error } = await c.order(body);
        assert.equal(res.status, 422, `${name}: ${JSON.stringify(error)}`);
        assert.ok(
          error.details.some((d: Json) => d.field === field && d.rule === rule),
          `${name}: ${JSON.stringify(error.details)}`,
        );
      }
      assert.equal((await c.runtime.storage.db.selectFrom('orders').select('id').execute()).length, 0, 'nothing stored');

      // Expired: a day later (a fresh token, since tokens live 15 minutes).
      c.clock.advance(24 * 3600_000 + 1000);
      const later = await apiClient(c.runtime, base, undefined, 'later');
      const stranger = await apiClient(c.runtime, base, undefined, 'stranger');
      const expiredRes = await later.post('/v1/orders', {
        ...good,
        kyc_attestation_id: ((await (await later.post('/v1/kyc/attestations', KYC3)).json()) as Json).id,
      });
      assert.equal(expiredRes.status, 201, 'a fresh attestation works');
      const stale = (await c.runtime.services.orders
        .prepare(c.runtime.storage.db, c.api.clientId as never, { ...good, side: 'buy' } as never)
        .catch((e: unknown) => e)) as Json;
      assert.ok(
        stale.details.some((d: Json) => d.field === 'kyc_attestation_id' && d.rule === 'not_expired'),
        JSON.stringify(stale.details),
      );

      // Cancel: another client's order is not found; a filled one is 409.
      const mine = (await (
        await later.post('/v1/orders', {
          ...good,
          kyc_attestation_id: ((await (await later.post('/v1/kyc/attestations', KYC3)).json()) as Json).id,
        })
      ).json()) as Json;
      assert.equal((await stranger.post(`/v1/orders/${mine.id}/cancel`, {})).status, 404);
      assert.equal((await stranger.call('GET', `/v1/orders/${mine.id}`)).status, 404);
      c.clock.advance(2000);
      await c.runtime.services.router.pollReports();
      assert.equal((await later.post(`/v1/orders/${mine.id}/cancel`, {})).status, 409);
    });

    test('the monthly cap: over it is 422 with the remaining allowance; parallel orders never exceed it', async (t) => {
      const c = await setup(t, database);
      const lite = await c.attestation(KYC1);
      // KYC1: 100,000 FCFA a month = 10,000,000 cents. KOLA is 1,550,000 cents a share; a market buy
      // counts at the band's upper limit, 1,666,250 cents (+7.5 %): 6 fit, 7 do not.
      const over = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: lite, instrument: 'KOLA.BRVM', side: 'buy', qty: 7 });
      assert.equal(over.res.status, 422);
      const detail = over.body.details[0];
      assert.equal(detail.field, 'qty');
      assert.equal(detail.rule, 'monthly_cap');
      assert.equal(detail.remaining_cents, 10_000_000);
      assert.equal(detail.cap_cents, 10_000_000);
      const sell = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: lite, instrument: 'KOLA.BRVM', side: 'sell', qty: 1000 });
      assert.equal(sell.res.status, 201, 'sells do not count against the cap');

      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          c.order({ rcpt_to: BAOBAB, kyc_attestation_id: lite, instrument: 'KOLA.BRVM', side: 'buy', qty: 1 }),
        ),
      );
      const accepted = results.filter((r) => r.res.status === 201);
      assert.equal(accepted.length, 6, results.map((r) => r.res.status).join());
      for (const r of results.filter((x) => x.res.status !== 201)) assert.equal(r.body.details[0].rule, 'monthly_cap');
      const last = results.find((r) => r.res.status === 422);
      assert.equal(last?.body.details[0].remaining_cents, 10_000_000 - 6 * 1_666_250);

      // A failed order frees its share of the cap (qty 13 is refused by the sandbox partner).
      const cheap = await c.attestation({ ...KYC1, subject_id: 'lite-2' });
      const refused = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: cheap, instrument: 'HUILB.BRVM', side: 'buy', qty: 13 });
      assert.equal(refused.body.status, 'failed');
      const after = await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: cheap, instrument: 'KOLA.BRVM', side: 'buy', qty: 6 });
      assert.equal(after.res.status, 201);
    });
  });
}

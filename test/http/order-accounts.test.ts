import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { PartnerImportRow } from '../../src/partners/partner.schemas.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { TEST_QTY } from '../../src/routing/sandbox/test-values.js';
import { apiClient } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { KYC3_REQUEST, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

const BAOBAB = sandboxPartner('baobab');
const SUBJECT = KYC3_REQUEST.subject_id;
const accountPath = (partner: string, subject = SUBJECT) => `/v1/subjects/${subject}/accounts/${partner}`;

/** Imports one partner into the running deployment, as `cauri partners import` would, and returns its id. */
async function importPartner(c: OrderContext, row: PartnerImportRow): Promise<string> {
  const report = await c.runtime.storage.transact((trx) => importPartners(trx, [row], { now: c.clock.now(), fixPlaintextAllowed: true }));
  assert.ok(report.committed, JSON.stringify(report.rejected));
  c.runtime.services.reference.invalidate();
  return report.applied[0]?.id ?? '';
}

const uemoa: Pick<PartnerImportRow, 'jurisdiction' | 'capabilities'> = { jurisdiction: 'UEMOA', capabilities: ['equities'] };
const fixMember = (port: number, account?: string) => ({
  host: '127.0.0.1',
  port,
  sender_comp_id: 'CAURI',
  target_comp_id: `SGI${port}`,
  tls: false,
  ...(account === undefined ? {} : { account }),
});

async function register(c: OrderContext, partner: string, accountNumber: string, subject = SUBJECT): Promise<void> {
  const res = await c.api.call('PUT', accountPath(partner, subject), { account_number: accountNumber });
  assert.ok(res.status === 200 || res.status === 201, `${res.status} ${await res.text()}`);
}

async function storedAccount(c: OrderContext, orderId: string): Promise<string | null> {
  const row = await c.runtime.storage.db.selectFrom('orders').select('account').where('id', '=', orderId).executeTakeFirstOrThrow();
  return row.account;
}

/** What the sandbox partner was handed at each attempt to submit the order: the account of each. */
async function handedOverAccounts(c: OrderContext, orderId: string): Promise<unknown[]> {
  const rows = await c.runtime.storage.db
    .selectFrom('sandbox_journal')
    .select('payload')
    .where('order_id', '=', orderId)
    .where('kind', '=', 'submit')
    .orderBy('id')
    .execute();
  return rows.map((r) => (JSON.parse(r.payload ?? '{}') as Json).account);
}

for (const database of DATABASES) {
  describe(`orders and investor accounts on ${database.name}`, () => {
    test('a partner that requires accounts refuses an order for a subject without one (rule account) and stores nothing; registered, the same key goes through', async (t) => {
      const c = await orderContext(t, database);
      const required = await importPartner(c, { name: 'Compte Obligatoire Titres', ...uemoa, checks: { accounts: true } });
      const att = await c.attestation();
      const request = { rcpt_to: required, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 };
      const key = randomUUID();

      const refused = await c.order(request, key);
      assert.equal(refused.res.status, 422, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'validation_error');
      assert.equal(refused.body.details.length, 1);
      const detail = refused.body.details[0] as Json;
      assert.deepEqual([detail.field, detail.rule, detail.value, detail.subject_id], ['rcpt_to', 'account', required, SUBJECT]);
      assert.match(detail.message, new RegExp(`PUT /v1/subjects/${SUBJECT}/accounts/${required}`));
      assert.deepEqual(await c.runtime.storage.db.selectFrom('orders').select('id').execute(), []);
      assert.deepEqual(await c.events('order.created'), []);

      // Another client's registration for the same subject id is another investor's.
      const other = await apiClient(c.runtime, c.base, undefined, 'another client');
      assert.equal((await other.call('PUT', accountPath(required), { account_number: 'NOT-YOURS' })).status, 201);
      assert.equal((await c.order(request)).res.status, 422);

      await register(c, required, 'CTO-0001');
      const accepted = await c.order(request, key);
      assert.equal(accepted.res.status, 201, JSON.stringify(accepted.body));
      assert.equal(accepted.res.headers.get('idempotent-replayed'), null, 'the refusal was not kept under the key');
      assert.equal(accepted.body.status, 'routed');
      assert.equal(await storedAccount(c, accepted.body.id), 'CTO-0001');
      assert.deepEqual(await handedOverAccounts(c, accepted.body.id), ['CTO-0001']);

      // Checks are reported together: an account missing and a bad quantity in one answer.
      const attOther = await c.attestation({ ...KYC3_REQUEST, subject_id: 'no-account' });
      const both = await c.order({ ...request, kyc_attestation_id: attOther, qty: 0 });
      assert.equal(both.res.status, 422);
      assert.deepEqual(
        both.body.details.map((d: Json) => [d.field, d.rule]),
        [['qty', 'minimum']],
        'schema errors come first, alone',
      );
      const manyRules = await c.order({ ...request, kyc_attestation_id: attOther, instrument: 'NOPE.BRVM' });
      assert.deepEqual(
        manyRules.body.details.map((d: Json) => [d.field, d.rule]),
        [
          ['rcpt_to', 'account'],
          ['instrument', 'exists'],
        ],
      );
    });

    test("a partner's default account stands in for a subject without one; a FIX partner without a default takes the order with no account", async (t) => {
      const c = await orderContext(t, database);
      const withDefault = await importPartner(c, {
        name: 'FIX Avec Omnibus',
        ...uemoa,
        connector: 'fix',
        fix: fixMember(9101, 'OMNIBUS-1'),
      });
      const noDefault = await importPartner(c, { name: 'FIX Sans Omnibus', ...uemoa, connector: 'fix', fix: fixMember(9102) });
      const att = await c.attestation();
      const order = async (partner: string) =>
        c.order({ rcpt_to: partner, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10, limit_price_cents: 1_550_000 });

      // No gateway answers in this test: the orders are stored and wait for their hand-over.
      const byDefault = await order(withDefault);
      assert.equal(byDefault.res.status, 201, JSON.stringify(byDefault.body));
      assert.equal(byDefault.body.status, 'created');
      assert.equal(await storedAccount(c, byDefault.body.id), 'OMNIBUS-1');
      // Neither a registration nor a default: accepted, without an account (its NewOrderSingle carries
      // no Account (1); the SGI may refuse it as it may any order).
      const withoutAccount = await order(noDefault);
      assert.equal(withoutAccount.res.status, 201, JSON.stringify(withoutAccount.body));
      assert.equal(withoutAccount.body.status, 'created');
      assert.equal(await storedAccount(c, withoutAccount.body.id), null);

      await register(c, withDefault, 'INV-9');
      await register(c, noDefault, 'INV-7');
      const registered = await order(withDefault);
      assert.equal(await storedAccount(c, registered.body.id), 'INV-9', 'the registered account wins over the default');
      const nowAccepted = await order(noDefault);
      assert.equal(nowAccepted.res.status, 201);
      assert.equal(await storedAccount(c, nowAccepted.body.id), 'INV-7');

      // A partner that requires nothing: the registered account still goes with the order, or none.
      const plain = async () =>
        (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 })).body;
      const none = await plain();
      assert.equal(none.status, 'routed');
      assert.equal(await storedAccount(c, none.id), null);
      await register(c, BAOBAB, 'BAO-3');
      assert.equal(await storedAccount(c, (await plain()).id), 'BAO-3');

      assert.equal((await c.api.call('DELETE', accountPath(withDefault))).status, 204);
      assert.equal((await c.api.call('DELETE', accountPath(noDefault))).status, 204);
      assert.equal(await storedAccount(c, (await order(withDefault)).body.id), 'OMNIBUS-1');
      const again = await order(noDefault);
      assert.equal(again.res.status, 201);
      assert.equal(await storedAccount(c, again.body.id), null);
    });

    test('the account is fixed on the order when it is accepted: retried hand-overs carry it after the registration changed, and no placed order changes', async (t) => {
      const c = await orderContext(t, database);
      const required = await importPartner(c, { name: 'Compte Obligatoire Titres', ...uemoa, checks: { accounts: true } });
      const att = await c.attestation();
      await register(c, required, 'FIRST-1');
      // The test value 503: the partner is unavailable at the first hand-overs, and the router retries.
      const placed = await c.order({
        rcpt_to: required,
        kyc_attestation_id: att,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: TEST_QTY.UNAVAILABLE,
      });
      assert.equal(placed.res.status, 201, JSON.stringify(placed.body));
      assert.equal(placed.body.status, 'created');

      await register(c, required, 'SECOND-2');
      for (let i = 0; i < 20 && (await c.get(placed.body.id)).status === 'created'; i++) await c.tick(60_000);
      assert.equal((await c.get(placed.body.id)).status !== 'created', true, 'routed at last');
      const attempts = await handedOverAccounts(c, placed.body.id);
      assert.ok(attempts.length >= 2, JSON.stringify(attempts));
      assert.deepEqual(new Set(attempts), new Set(['FIRST-1']), 'every hand-over carried the account the order was accepted with');
      assert.equal(await storedAccount(c, placed.body.id), 'FIRST-1');

      const later = await c.order({ rcpt_to: required, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 });
      assert.equal(await storedAccount(c, later.body.id), 'SECOND-2');

      assert.equal((await c.api.call('DELETE', accountPath(required))).status, 204);
      assert.equal(await storedAccount(c, placed.body.id), 'FIRST-1');
      assert.equal(await storedAccount(c, later.body.id), 'SECOND-2');
      const refused = await c.order({ rcpt_to: required, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 10 });
      assert.equal(refused.res.status, 422);
      // Cancelling a placed order still works without a registration.
      const cancel = await c.post(`/v1/orders/${later.body.id}/cancel`, {});
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    });
  });
}

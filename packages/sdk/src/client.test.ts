import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriApiError } from './errors.js';
import { CauriClient } from './client.js';
import { verifyAttestation, verifyCrl } from './index.js';
import { calls, setup } from './testing/client-setup.js';
import type { OrderRequest } from './types.js';

describe('CauriClient against the service (SQLite, loopback HTTP)', () => {
  test('an attestation and an order through the SDK, verified offline with the re-exported verifiers', async (t) => {
    const c = await setup(t);
    const client = c.client();
    const attestation = await client.attestations.create(c.kyc2);
    assert.match(attestation.id, /^att_/);
    assert.deepEqual(await client.attestations.get(attestation.id), attestation);
    const keys = await client.attestations.keyDocument();
    const verified = verifyAttestation(attestation, keys, { now: c.clock.now() });
    assert.equal(verified.valid, true, JSON.stringify(verified));

    const request: OrderRequest = {
      rcpt_to: c.baobab,
      kyc_attestation_id: attestation.id,
      instrument: 'KOLA.BRVM',
      side: 'buy',
      qty: 10,
      client_metadata: { ref: 'sdk-1' },
    };
    const order = await client.orders.create(request);
    assert.match(order.id, /^ord_/);
    assert.equal(order.status, 'routed');
    assert.deepEqual(order.client_metadata, { ref: 'sdk-1' });
    assert.equal((await client.orders.get(order.id)).id, order.id);
    assert.deepEqual(
      (await client.orders.list({ status: 'routed' }).toArray()).map((o) => o.id),
      [order.id],
    );
    assert.deepEqual(await client.orders.list({ status: 'filled' }).toArray(), []);
    // The lower limit of KOLA.BRVM's price band: it rests, the simulated price never coming down to it.
    const resting = await client.orders.create({ ...request, qty: 5, limit_price_cents: 1_433_750, time_in_force: 'gtc' });
    const amended = await client.orders.amend(resting.id, { qty: 8 });
    assert.deepEqual([amended.qty, amended.pending_request, amended.time_in_force], [8, null, 'gtc']);
    await assert.rejects(
      client.orders.amend(order.id, { qty: 20 }),
      (e: unknown) => e instanceof CauriApiError && e.status === 409,
      'a market order',
    );
    c.clock.advance(1500);
    await c.runtime.services.router.pollReports();
    const fills = await client.orders.fills(order.id);
    assert.deepEqual(
      fills.map((f) => [f.order_id, f.qty, f.gross_cents === f.qty * f.price_cents, f.fees.map((x) => x.type), f.settlement_status]),
      [[order.id, 10, true, ['commission', 'exchange', 'depository', 'regulator', 'tax'], 'pending']],
    );
    const [position] = await client.positions.list({ subject_id: attestation.subject_id }).toArray();
    assert.deepEqual(
      [position?.instrument, position?.qty, position?.average_cost_cents, position?.realised_pnl_cents],
      ['KOLA.BRVM', 10, fills[0]?.price_cents, 0],
    );
    const yesterday = new Date(c.clock.now().getTime() - 86_400_000).toISOString().slice(0, 10);
    const statement = await client.positions.statements.create({
      subject_id: attestation.subject_id,
      rcpt_to: c.baobab,
      as_of: yesterday,
      holdings: [{ instrument: 'KOLA.BRVM', qty: 4, average_cost_cents: 1_500_000 }],
    });
    assert.deepEqual(
      [statement.breaks, statement.previous_statement_id],
      [[{ instrument: 'KOLA.BRVM', statement_qty: 4, expected_qty: 0, difference_qty: 4 }], null],
    );
    assert.deepEqual(await client.positions.statements.get(statement.id), statement);
    assert.deepEqual(
      (await client.positions.statements.list({ subject_id: attestation.subject_id }).toArray()).map((s) => s.id),
      [statement.id],
    );
    assert.equal(
      (await client.positions.list({ instrument: 'KOLA.BRVM' }).toArray())[0]?.qty,
      14,
      'the statement, plus the fill that settles after it',
    );
    const note = await client.orders.contractNote(order.id);
    assert.deepEqual([note.order_id, note.fills, note.net_cents], [order.id, fills, fills[0]!.net_cents]);
    const pdf = await client.orders.contractNotePdf(order.id);
    assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), '%PDF-');
    // The document's language tag, in its catalogue: French by default for a BRVM partner, English on request.
    const lang = (bytes: Uint8Array) => /\/Lang \((\w+)\)/.exec(new TextDecoder('latin1').decode(bytes))?.[1];
    assert.equal(lang(pdf), 'fr');
    assert.equal(lang(await client.orders.contractNotePdf(order.id, { lang: 'en' })), 'en');
    await assert.rejects(
      client.orders.contractNote(resting.id),
      (e: unknown) => e instanceof CauriApiError && e.status === 409 && e.code === 'conflict',
      'no fill yet',
    );
    assert.equal((await client.orders.cancel(resting.id)).status, 'cancelled');
    await assert.rejects(
      client.orders.cancel(order.id),
      (e: unknown) => e instanceof CauriApiError && e.status === 409 && e.code === 'conflict',
    );
    assert.equal(calls(c.log, 'POST', `/v1/orders/${order.id}/cancel`).length, 1, 'a 409 without Retry-After is final: not retried');

    const revoked = await client.attestations.revoke(attestation.id, { reason: 'superseded' });
    assert.equal(revoked.reason, 'superseded');
    assert.equal((await client.attestations.status(attestation.id)).status, 'revoked');
    const crl = await client.attestations.crl();
    assert.deepEqual(
      crl.entries.map((e) => e.attestation_id),
      [attestation.id],
    );
    assert.equal(verifyCrl(crl, keys).valid, true);
    const afterRevocation = verifyAttestation(attestation, keys, { crl, now: c.clock.now() });
    assert.equal(afterRevocation.valid ? null : afterRevocation.reason, 'revoked');

    // Every mutating POST carried its own fresh UUID key; reads and the token exchange carried none.
    const keyed = c.log.filter((e) => e.idempotencyKey !== null);
    assert.deepEqual([...new Set(keyed.map((e) => `${e.method} ${e.path.replace(/(att|ord)_\w+/, '{id}')}`))].sort(), [
      'POST /v1/kyc/attestations',
      'POST /v1/kyc/attestations/{id}/revoke',
      'POST /v1/orders',
      'POST /v1/orders/{id}/amend',
      'POST /v1/orders/{id}/cancel',
      'POST /v1/positions/statements',
    ]);
    assert.equal(new Set(keyed.map((e) => e.idempotencyKey)).size, keyed.length, 'each call its own key (nothing was retried here)');
  });

  test("investor accounts through the SDK: set, read, page through a subject's list, remove; an order carries the account", async (t) => {
    const c = await setup(t);
    const client = c.client();
    const lagune = c.svc.SANDBOX_PARTNERS.find((p) => p.name.startsWith('Lagune'))?.id ?? '';
    const subject = 'inv:0001';
    const set = await client.accounts.set(subject, c.baobab, 'CI-0042 7781');
    assert.deepEqual([set.subject_id, set.partner_id, set.account_number], [subject, c.baobab, 'CI-0042 7781']);
    await client.accounts.set(subject, lagune, 'LCB-9');
    assert.equal((await client.accounts.set(subject, lagune, 'LCB-10')).account_number, 'LCB-10');
    assert.equal((await client.accounts.get(subject, c.baobab)).account_number, 'CI-0042 7781');
    const pages = [];
    for await (const page of client.accounts.list(subject, { limit: 1 }).pages()) pages.push(page.data.map((a) => a.partner_id));
    assert.deepEqual(
      pages,
      [c.baobab, lagune].sort().map((id) => [id]),
    );
    const puts = calls(c.log, 'PUT', `/v1/subjects/${encodeURIComponent(subject)}/accounts/${c.baobab}`);
    assert.equal(puts.length, 1);
    assert.equal(puts[0]?.idempotencyKey, null, 'a PUT takes no Idempotency-Key');

    const attestation = await client.attestations.create({ ...c.kyc2, subject_id: subject });
    const order = await client.orders.create({
      rcpt_to: c.baobab,
      kyc_attestation_id: attestation.id,
      instrument: 'KOLA.BRVM',
      side: 'buy',
      qty: 5,
    });
    const stored = await c.runtime.storage.db.selectFrom('orders').select(['id', 'account']).execute();
    assert.deepEqual(stored, [{ id: order.id, account: 'CI-0042 7781' }], 'the order was accepted with the account');

    await client.accounts.remove(subject, c.baobab);
    await assert.rejects(client.accounts.get(subject, c.baobab), (e: unknown) => e instanceof CauriApiError && e.status === 404);
    await assert.rejects(client.accounts.set(subject, c.baobab, 'A|B'), (e: unknown) => {
      assert.ok(e instanceof CauriApiError);
      assert.deepEqual(
        e.details?.map((d) => [d.field, d.rule]),
        [['account_number', 'pattern']],
      );
      return true;
    });
  });

  test('webhook endpoints, deliveries, events and audit through the SDK', async (t) => {
    const c = await setup(t);
    const client = c.client();
    const created = await client.webhooks.endpoints.create({
      url: 'http://127.0.0.1:9/hooks',
      events: ['order.created'],
      description: 'sdk',
    });
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual(
      (await client.webhooks.endpoints.list().toArray()).map((e) => e.id),
      [created.id],
    );
    assert.equal((await client.webhooks.endpoints.get(created.id)).description, 'sdk');
    const updated = await client.webhooks.endpoints.update(created.id, { events: ['order.created', 'order.failed'], disabled: true });
    assert.deepEqual(updated.events, ['order.created', 'order.failed']);
    const rotated = await client.webhooks.endpoints.rotateSecret(created.id);
    assert.notEqual(rotated.secret, created.secret);
    // A disabled endpoint gets no new deliveries, test ones included.
    await assert.rejects(
      client.webhooks.endpoints.test(created.id, { type: 'webhook.test' }),
      (e: unknown) => e instanceof CauriApiError && e.status === 409 && e.code === 'conflict',
    );
    await client.webhooks.endpoints.update(created.id, { disabled: false });
    const sent = await client.webhooks.endpoints.test(created.id, { type: 'webhook.test' });
    assert.equal(sent.event.type, 'webhook.test');
    assert.equal((await client.events.get(sent.event.id)).id, sent.event.id);
    assert.ok((await client.events.list({ type: 'webhook.test' }).toArray()).some((e) => e.id === sent.event.id));
    const deliveries = await client.webhooks.deliveries.list({ endpoint_id: created.id }).toArray();
    assert.deepEqual(
      deliveries.map((d) => d.id),
      [sent.delivery.id],
    );
    assert.equal((await client.webhooks.deliveries.get(sent.delivery.id)).event_id, sent.event.id);
    await assert.rejects(
      client.webhooks.deliveries.replay(sent.delivery.id),
      (e: unknown) => e instanceof CauriApiError && e.code === 'conflict',
    );
    assert.equal((await client.webhooks.endpoints.replayDead(created.id)).replayed, 0);
    await client.webhooks.endpoints.delete(created.id);
    await assert.rejects(
      client.webhooks.endpoints.get(created.id),
      (e: unknown) => e instanceof CauriApiError && e.status === 404 && e.code === 'not_found',
    );

    const today = c.clock.now().toISOString().slice(0, 10);
    await assert.rejects(client.audit.snapshot(today), (e: unknown) => e instanceof CauriApiError && e.code === 'not_found');
    await assert.rejects(
      client.audit.proof(today, 'ord_01kdvdna00zzzzzzzzzzzzzzzz'),
      (e: unknown) => e instanceof CauriApiError && e.status === 404,
    );
    await assert.rejects(client.audit.snapshot('2026-13-01'), (e: unknown) => {
      assert.ok(e instanceof CauriApiError);
      assert.equal(e.code, 'validation_error');
      assert.ok(
        (e.details ?? []).some((d) => d.field === 'date'),
        JSON.stringify(e.details),
      );
      return true;
    });

    // The operators' view: refused to an integrator's client, open to one created with operator:read.
    await assert.rejects(
      client.operator.fixSessions(),
      (e: unknown) => e instanceof CauriApiError && e.status === 403 && e.code === 'forbidden',
    );
    const operator = await c.runtime.services.clients.create('sdk operator', ['operator:read']);
    const operatorClient = new CauriClient({ baseUrl: c.baseUrl, clientId: operator.client_id, clientSecret: operator.client_secret });
    assert.deepEqual(await operatorClient.operator.fixSessions(), [], 'the sandbox has no FIX partner');
  });
});

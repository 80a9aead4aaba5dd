import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CauriApiError, CauriNetworkError } from './errors.js';
import { CauriClient, type CauriClientOptions } from './client.js';
import { service, type ManualClock, type Runtime, type Service } from './testing/service.js';
import { verifyAttestation, verifyCrl } from './index.js';
import type { AttestationRequest, OrderRequest } from './types.js';

/** One HTTP exchange as the wire saw it (recorded by a wrapping fetch). */
interface Exchange {
  method: string;
  path: string;
  query: string;
  status: number | 'network_error';
  idempotencyKey: string | null;
  authorization: string | null;
  synthetic: boolean;
}

/** Fault injection on the client's side of the wire: answer or fail an attempt without reaching the server. */
type Fault = (method: string, path: string) => Response | Error | undefined;

interface Ctx {
  svc: Service;
  runtime: Runtime;
  clock: ManualClock;
  baseUrl: string;
  credentials: { clientId: string; clientSecret: string };
  log: Exchange[];
  sleeps: number[];
  faults: Fault[];
  client(options?: Partial<CauriClientOptions>): CauriClient;
  kyc2: AttestationRequest;
  baobab: string;
}

async function setup(t: TestContext, env: Record<string, string> = {}): Promise<Ctx> {
  const svc = await service();
  const clock = new svc.ManualClock(new Date());
  const runtime = await svc.startRuntime(t, svc.DATABASES[0]!, { CAURI_WORKERS: 'none', ...env }, { clock });
  const baseUrl = await svc.listen(runtime);
  const issued = await runtime.services.clients.create('sdk test');
  const log: Exchange[] = [];
  const sleeps: number[] = [];
  const faults: Fault[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    const method = init?.method ?? 'GET';
    const entry = {
      method,
      path: url.pathname,
      query: url.search,
      idempotencyKey: headers.get('idempotency-key'),
      authorization: headers.get('authorization'),
    };
    const fault = faults.shift()?.(method, url.pathname);
    if (fault instanceof Error) {
      log.push({ ...entry, status: 'network_error', synthetic: true });
      throw fault;
    }
    const response = fault ?? (await fetch(input, init));
    log.push({ ...entry, status: response.status, synthetic: fault !== undefined });
    return response;
  };
  const baobab = svc.SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id;
  assert.ok(baobab);
  return {
    svc,
    runtime,
    clock,
    baseUrl,
    credentials: { clientId: issued.client_id, clientSecret: issued.client_secret },
    log,
    sleeps,
    faults,
    kyc2: svc.KYC2_REQUEST as AttestationRequest,
    baobab,
    client: (options = {}) =>
      new CauriClient({
        baseUrl,
        clientId: issued.client_id,
        clientSecret: issued.client_secret,
        fetch: recordingFetch,
        // Waits are recorded, not slept; the tests move the service's clock themselves when needed.
        sleep: async (ms) => {
          sleeps.push(ms);
        },
        random: () => 0.5,
        ...options,
      }),
  };
}

const calls = (log: Exchange[], method: string, path: string) => log.filter((e) => e.method === method && e.path === path);
const trace = (log: Exchange[]) => log.map((e) => `${e.method} ${e.path} ${e.status}`);

describe('CauriClient against the service (SQLite, loopback HTTP)', () => {
  test('access tokens: fetched on first use, refreshed before expiry, and once after a 401', async (t) => {
    const c = await setup(t);
    // The client reads the same manual clock as the service, so "before expiry" is observable.
    const client = c.client({ now: () => c.clock.now().getTime() });
    const token = await client.auth.token();
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.expires_in, 900);
    assert.ok(token.scope.split(' ').includes('orders:write'));

    await client.orders.list().toArray();
    c.clock.advance(830_000); // 70 s left: outside the 60 s margin, the token is reused
    await client.orders.list().toArray();
    assert.equal(calls(c.log, 'POST', '/v1/auth/token').length, 1);
    c.clock.advance(20_000); // 50 s left: refreshed before use, so the service never sees an expired token
    await client.orders.list().toArray();
    assert.deepEqual(trace(c.log), [
      'POST /v1/auth/token 200',
      'GET /v1/orders 200',
      'GET /v1/orders 200',
      'POST /v1/auth/token 200',
      'GET /v1/orders 200',
    ]);
    const [first, , , , last] = c.log;
    assert.notEqual(first?.authorization, last?.authorization);

    // A client on its own clock does not know the token expired: the 401 makes it refresh, once.
    c.log.length = 0;
    const unaware = c.client();
    await unaware.orders.list().toArray();
    c.clock.advance(901_000);
    await unaware.orders.list().toArray();
    assert.deepEqual(trace(c.log), [
      'POST /v1/auth/token 200',
      'GET /v1/orders 200',
      'GET /v1/orders 401',
      'POST /v1/auth/token 200',
      'GET /v1/orders 200',
    ]);

    const wrong = c.client({ clientSecret: 'sk_test_wrong' });
    await assert.rejects(wrong.orders.get('ord_01kdvdna00zzzzzzzzzzzzzzzz'), (e: unknown) => {
      assert.ok(e instanceof CauriApiError);
      assert.equal(e.status, 401);
      assert.equal(e.code, 'unauthorized');
      assert.equal(e.oauthError, 'invalid_client');
      assert.match(e.request_id ?? '', /^req_/);
      assert.equal(e.operation, 'POST /v1/auth/token');
      return true;
    });
  });

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

  test('the public partner directory, iterated across pages of 3 without credentials', async (t) => {
    const c = await setup(t);
    const viaPages: string[] = [];
    const client = c.client({ clientId: undefined, clientSecret: undefined });
    for await (const partner of client.partners.list({ limit: 3 })) viaPages.push(partner.id);
    const approved = c.svc.SANDBOX_PARTNERS.filter((p) => p.status === undefined || p.status === 'approved')
      .map((p) => p.id)
      .sort();
    assert.deepEqual(viaPages, approved);
    const requests = calls(c.log, 'GET', '/v1/sgi/partners');
    assert.equal(requests.length, Math.ceil(approved.length / 3));
    assert.equal(requests[0]?.query, '?limit=3');
    assert.ok(requests.slice(1).every((r) => /^\?limit=3&cursor=./.test(r.query)));
    assert.ok(
      requests.every((r) => r.authorization === null),
      'public calls carry no token',
    );
    const first = await client.partners.get(approved[0]!);
    assert.equal(first.id, approved[0]);
    assert.equal((await client.instruments.get('KOLA.BRVM')).class, 'equities');
    const pages = [];
    for await (const page of client.instruments.list({ exchange: 'BRVM', limit: 2 }).pages()) pages.push(page);
    assert.ok(pages.length >= 2 && pages.every((p) => p.data.every((i) => i.exchange === 'BRVM')));
    assert.equal(pages.at(-1)?.nextCursor, null);
    await assert.rejects(client.orders.list().toArray(), /clientId and clientSecret are required/);
  });

  test('429: waits Retry-After, then retries with the same Idempotency-Key; one resource is created', async (t) => {
    const c = await setup(t, { CAURI_RATE_LIMIT_SANDBOX: '2' });
    const client = c.client({
      sleep: async (ms) => {
        c.sleeps.push(ms);
        c.clock.advance(ms); // the rate-limit window is on the service's clock
      },
    });
    const first = await client.attestations.create(c.kyc2); // token exchange + this: the limit of 2
    const second = await client.attestations.create({ ...c.kyc2, subject_id: 'inv-0002' });
    const posts = calls(c.log, 'POST', '/v1/kyc/attestations');
    assert.deepEqual(
      posts.map((p) => p.status),
      [201, 429, 201],
    );
    assert.equal(posts[1]?.idempotencyKey, posts[2]?.idempotencyKey, 'the retry reuses the key');
    assert.notEqual(posts[0]?.idempotencyKey, posts[1]?.idempotencyKey);
    assert.equal(c.sleeps.length, 1);
    const waited = c.sleeps[0]!;
    assert.ok(waited >= 1000 && waited <= 60_000 && waited % 1000 === 0, `Retry-After in whole seconds, got ${waited} ms`);

    // The key is bound to exactly one attestation: replaying it returns that one and creates nothing.
    const replay = await fetch(`${c.baseUrl}/v1/kyc/attestations`, {
      method: 'POST',
      headers: {
        authorization: posts[2]!.authorization!,
        'content-type': 'application/json',
        'idempotency-key': posts[2]!.idempotencyKey!,
      },
      body: JSON.stringify({ ...c.kyc2, subject_id: 'inv-0002' }),
    });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await replay.json()) as { id: string }).id, second.id);
    const rows = await c.runtime.storage.db.selectFrom('attestations').select('id').execute();
    assert.deepEqual(rows.map((r) => r.id).sort(), [first.id, second.id].sort());
  });

  test('a network error and a 500 are retried with the same Idempotency-Key; one order exists', async (t) => {
    const c = await setup(t);
    const client = c.client();
    const attestation = await client.attestations.create(c.kyc2);
    const synthetic500 = () =>
      new Response(JSON.stringify({ code: 'internal_error', message: 'injected', request_id: 'req_injected' }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    c.faults.push(
      () => new TypeError('fetch failed'), // the connection drops: no response at all
      () => synthetic500(), // then the "service" fails transiently
    );
    const order = await client.orders.create({
      rcpt_to: c.baobab,
      kyc_attestation_id: attestation.id,
      instrument: 'KOLA.BRVM',
      side: 'buy',
      qty: 5,
    });
    const posts = calls(c.log, 'POST', '/v1/orders');
    assert.deepEqual(
      posts.map((p) => [p.status, p.synthetic]),
      [
        ['network_error', true],
        [500, true],
        [201, false],
      ],
    );
    assert.equal(new Set(posts.map((p) => p.idempotencyKey)).size, 1, 'one key across the three attempts');
    assert.deepEqual(c.sleeps, [187, 375], 'exponential backoff with jitter (random fixed at 0.5)');
    assert.deepEqual(
      (await client.orders.list().toArray()).map((o) => o.id),
      [order.id],
    );

    // Spent retries: the last error is thrown, typed, with what is needed to retry by hand.
    const once = c.client({ retry: { maxAttempts: 2 } });
    await once.auth.token(); // so that the faults below meet the calls, not the token exchange
    c.faults.push(synthetic500, synthetic500);
    await assert.rejects(
      once.orders.get(order.id),
      (e: unknown) => e instanceof CauriApiError && e.status === 500 && e.code === 'internal_error' && e.request_id === 'req_injected',
    );
    c.faults.push(
      () => new TypeError('fetch failed'),
      () => new TypeError('fetch failed'),
    );
    await assert.rejects(once.orders.cancel(order.id), (e: unknown) => {
      assert.ok(e instanceof CauriNetworkError);
      assert.equal(e.operation, 'POST /v1/orders/{id}/cancel');
      assert.match(e.idempotencyKey ?? '', /^[0-9a-f-]{36}$/);
      return true;
    });
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

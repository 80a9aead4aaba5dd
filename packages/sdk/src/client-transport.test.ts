import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CauriApiError, CauriNetworkError } from './errors.js';
import { calls, setup, trace } from './testing/client-setup.js';
import { service } from './testing/service.js';

// What every call of the client goes through: the access token, the public calls without one, and
// the retries with one Idempotency-Key.
describe('CauriClient transport against the service (SQLite, loopback HTTP)', () => {
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
});

for (const db of (await service()).DATABASES) {
  test(`408 (${db.name}): a request the service did not receive in time is sent again with the same Idempotency-Key`, async (t) => {
    const c = await setup(t, { CAURI_HTTP_HEADERS_TIMEOUT_MS: '500', CAURI_HTTP_REQUEST_TIMEOUT_MS: '500' }, db);
    const attempts: { key: string | null; status: number | string }[] = [];
    let stalled = false;
    // The first attempt sends the start of its body, then waits past the service's request time-out.
    const slowFirst: typeof fetch = async (input, init) => {
      const key = new Headers(init?.headers).get('idempotency-key');
      let sent = init;
      if (key !== null && !stalled) {
        stalled = true;
        const bytes = new TextEncoder().encode(String(init?.body));
        const body = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(bytes.subarray(0, 10));
            await new Promise((resolve) => setTimeout(resolve, 2000));
            try {
              controller.enqueue(bytes.subarray(10));
              controller.close();
            } catch {
              // the service already closed the connection
            }
          },
        });
        sent = { ...init, body, duplex: 'half' } as RequestInit;
      }
      try {
        const response = await fetch(input, sent);
        if (key !== null) attempts.push({ key, status: response.status });
        return response;
      } catch (error) {
        if (key !== null) attempts.push({ key, status: 'network_error' });
        throw error;
      }
    };
    const client = c.client({ fetch: slowFirst });
    const created = await client.attestations.create(c.kyc2);
    assert.deepEqual(
      attempts.map((a) => a.status),
      [408, 201],
    );
    assert.equal(attempts[0]?.key, attempts[1]?.key, 'the retry reuses the key');
    const rows = await c.runtime.storage.db.selectFrom('attestations').select('id').execute();
    assert.deepEqual(
      rows.map((r) => r.id),
      [created.id],
    );
  });
}

import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { ManualClock } from '../../src/lib/clock.js';

// The limits under test live in the rate-limit store, not in the database: SQLite is enough.
const database = DATABASES[0]!;

/** Requests come from several addresses: the service trusts X-Forwarded-For here, as behind a proxy. */
async function setup(t: TestContext, env: Record<string, string>, clock = new ManualClock('2026-11-22T10:00:05.000Z')) {
  const runtime = await startRuntime(t, database, { CAURI_TRUST_PROXY: 'true', ...env }, { clock });
  const base = await listen(runtime);
  const victim = await runtime.services.clients.create('victim', ['kyc:read']);
  const exchange = (from: string, clientId: string, secret: string) =>
    fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
    });
  const read = (from: string, token: string) =>
    fetch(`${base}/v1/kyc/attestations/att_01kdvdna00zzzzzzzzzzzzzzzz`, {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': from },
    });
  return { runtime, base, clock, victim, exchange, read };
}

const VICTIM_ADDRESS = '198.51.100.7';
const ATTACKER_ADDRESS = '203.0.113.66';

function assertRateHeaders(res: Response, what: string): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    assert.match(res.headers.get(name) ?? '', /^\d+$/, `${what}: ${name}`);
  }
}

describe('POST /v1/auth/token: limits and failed credentials', () => {
  test("wrong secrets naming a client id never count against that client's own limit", async (t) => {
    const { victim, exchange, read } = await setup(t, { CAURI_RATE_LIMIT_SANDBOX: '30', CAURI_AUTH_FAILURES_PER_CLIENT: '1000' });
    const issued = await exchange(VICTIM_ADDRESS, victim.client_id, victim.client_secret);
    assert.equal(issued.status, 200);
    assert.equal(issued.headers.get('x-ratelimit-remaining'), '29', 'a successful exchange counts once for its client');
    const { access_token: token } = (await issued.json()) as { access_token: string };

    // The attack: more wrong-secret requests naming the victim's id than the victim's whole limit.
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await exchange(ATTACKER_ADDRESS, victim.client_id, `sk_test_guess${i}`);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    assert.deepEqual([...new Set(statuses)].sort(), [401, 429], String(statuses));

    const call = await read(VICTIM_ADDRESS, token);
    assert.equal(call.status, 404, 'the victim keeps using its token');
    assert.equal(call.headers.get('x-ratelimit-remaining'), '28', "the attacker's requests did not count against the victim");
    const again = await exchange(VICTIM_ADDRESS, victim.client_id, victim.client_secret);
    assert.equal(again.status, 200, 'and its real secret still gets a token');
  });

  test('an address over its failed checks is refused before any secret is checked; other addresses are not', async (t) => {
    const { clock, victim, exchange } = await setup(t, { CAURI_AUTH_FAILURES_PER_ADDRESS: '3' });
    for (let i = 0; i < 3; i++) {
      const res = await exchange(ATTACKER_ADDRESS, victim.client_id, 'sk_test_wrong');
      assert.equal(res.status, 401);
      assertRateHeaders(res, '401');
    }
    // Refused even with the right secret: answering it would tell a guesser which guess was right.
    const refused = await exchange(ATTACKER_ADDRESS, victim.client_id, victim.client_secret);
    const body = (await refused.json()) as { code: string; message: string; error: string; error_description: string };
    assert.equal(refused.status, 429);
    assert.equal(body.code, 'rate_limit_exceeded');
    assert.match(body.message, /failed client authentications from this address/);
    assert.equal(body.error, 'temporarily_unavailable');
    assert.equal(body.error_description, body.message);
    assert.equal(refused.headers.get('retry-after'), '55');
    assert.equal(refused.headers.get('x-ratelimit-limit'), '3');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(refused.headers.get('x-ratelimit-reset'), String(Date.parse('2026-11-22T10:01:00Z') / 1000));

    assert.equal((await exchange(VICTIM_ADDRESS, victim.client_id, victim.client_secret)).status, 200, 'another address is not affected');
    clock.advance(55_000);
    assert.equal((await exchange(ATTACKER_ADDRESS, victim.client_id, victim.client_secret)).status, 200, 'the next window starts afresh');
  });

  test('failures naming one client id from many addresses are slowed down; its right secret is not', async (t) => {
    const { victim, exchange } = await setup(t, { CAURI_AUTH_FAILURES_PER_CLIENT: '1' });
    const elapsed: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const started = performance.now();
      const res = await exchange(`192.0.2.${i}`, victim.client_id, 'sk_test_wrong');
      assert.equal(res.status, 401);
      elapsed.push(performance.now() - started);
    }
    // Beyond the one failure allowed: 100, 200, 400 and 800 ms (doubling, at most 2 s).
    [100, 200, 400, 800].forEach((least, i) =>
      assert.ok((elapsed[i + 1] as number) >= least - 5, `failure ${i + 2} took ${elapsed[i + 1]} ms`),
    );
    const started = performance.now();
    const right = await exchange('192.0.2.99', victim.client_id, victim.client_secret);
    assert.equal(right.status, 200);
    assert.ok(performance.now() - started < 1000, 'the next failure would wait 1.6 s; the right secret does not');
    const metrics = await (await fetch(`${right.url.replace('/v1/auth/token', '/metrics')}`)).text();
    assert.match(metrics, /cauri_auth_failures_total\{outcome="delayed"\} 4/);
    assert.match(metrics, /cauri_auth_failures_total\{outcome="rejected"\} 1/);
  });

  test('behind proxies named in CAURI_TRUST_PROXY, a forged X-Forwarded-For does not give a new address', async (t) => {
    // The test connects from loopback, as the proxy would; the proxy appends the address it saw.
    const { victim, exchange } = await setup(t, { CAURI_TRUST_PROXY: '127.0.0.1', CAURI_AUTH_FAILURES_PER_ADDRESS: '2' });
    const forged = (i: number) => `10.9.8.${i}, ${ATTACKER_ADDRESS}`;
    assert.equal((await exchange(forged(1), victim.client_id, 'sk_test_wrong')).status, 401);
    assert.equal((await exchange(forged(2), victim.client_id, 'sk_test_wrong')).status, 401);
    assert.equal((await exchange(forged(3), victim.client_id, victim.client_secret)).status, 429);
    assert.equal((await exchange(VICTIM_ADDRESS, victim.client_id, victim.client_secret)).status, 200);
  });

  test('every answer of the token endpoint carries the rate-limit headers', async (t) => {
    const { base, victim, exchange } = await setup(t, {});
    const post = (contentType: string, body: string) =>
      fetch(`${base}/v1/auth/token`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const cases: [string, Response, number][] = [
      ['200', await exchange(VICTIM_ADDRESS, victim.client_id, victim.client_secret), 200],
      ['401', await exchange(VICTIM_ADDRESS, victim.client_id, 'sk_test_wrong'), 401],
      ['415', await post('text/plain', 'grant_type=client_credentials'), 415],
      ['422 invalid JSON', await post('application/json', '{"grant_type":'), 422],
      ['422 schema', await post('application/json', JSON.stringify({ grant_type: 'client_credentials', client_id: 5 })), 422],
      ['422 grant type', await post('application/json', JSON.stringify({ grant_type: 'password' })), 422],
    ];
    for (const [what, res, status] of cases) {
      assert.equal(res.status, status, what);
      assertRateHeaders(res, what);
      await res.arrayBuffer();
    }
  });

  test('the token endpoint counts every request against its address, before reading the body', async (t) => {
    const { base } = await setup(t, { CAURI_RATE_LIMIT_SANDBOX: '3' });
    const post = () =>
      fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'x-forwarded-for': ATTACKER_ADDRESS },
        body: 'x',
      });
    for (let i = 0; i < 3; i++) {
      const res = await post();
      assert.equal(res.status, 415);
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(2 - i));
    }
    const limited = await post();
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '55');
    // Refused before the body is read (the address's budget), it is an OAuth error all the same.
    const body = (await limited.json()) as { code: string; error: string; error_description: string; message: string };
    assert.deepEqual([body.code, body.error, body.error_description], ['rate_limit_exceeded', 'temporarily_unavailable', body.message]);
  });
});

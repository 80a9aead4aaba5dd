import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/lib/clock.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';

type Json = Record<string, any>;

for (const database of DATABASES) {
  test(`a client rotates its own secret with its access token (${database.name})`, async (t) => {
    const clock = new ManualClock(new Date());
    const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' }, { clock });
    const base = await listen(runtime);
    const issued = await runtime.services.clients.create('self-service');
    const exchange = (secret: string, scope?: string) =>
      fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: issued.client_id,
          client_secret: secret,
          ...(scope === undefined ? {} : { scope }),
        }),
      });
    const tokenOf = async (secret: string, scope?: string) =>
      ((await (await exchange(secret, scope)).json()) as Json).access_token as string;
    const rotate = (token: string | null, key: string | null = randomUUID(), body?: unknown) =>
      fetch(`${base}/v1/auth/rotate-secret`, {
        method: 'POST',
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          ...(key === null ? {} : { 'idempotency-key': key }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    await t.test('without a valid token: 401, and nothing rotates', async () => {
      const none = await rotate(null);
      assert.equal(none.status, 401);
      assert.equal(((await none.json()) as Json).code, 'unauthorized');
      assert.equal((await rotate('not.a.token')).status, 401);
      assert.equal((await exchange(issued.client_secret)).status, 200);
    });

    await t.test('a token narrowed to fewer scopes than the client has: 403', async () => {
      const res = await rotate(await tokenOf(issued.client_secret, 'orders:read'));
      assert.equal(res.status, 403);
      const body = (await res.json()) as Json;
      assert.equal(body.code, 'forbidden');
      // The message has the form every missing scope gets, naming one scope the token lacks.
      const scope = /^Missing scope: ([a-z]+:[a-z]+)$/.exec(String(body.message))?.[1];
      assert.ok(scope !== undefined && scope !== 'orders:read', String(body.message));
    });

    await t.test('the token and its scopes are checked before the request itself (401, then 403, then 415 and 422)', async () => {
      const send = (token: string | null, headers: Record<string, string>, body: string) =>
        fetch(`${base}/v1/auth/rotate-secret`, {
          method: 'POST',
          headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
          body,
        });
      const codeOf = async (res: Response) => [res.status, ((await res.json()) as Json).code];
      const narrowed = await tokenOf(issued.client_secret, 'orders:read');
      for (const token of [null, 'not.a.token', narrowed]) {
        const expected = token === narrowed ? [403, 'forbidden'] : [401, 'unauthorized'];
        assert.deepEqual(await codeOf(await send(token, { 'content-type': 'application/json' }, '{}')), expected, 'no Idempotency-Key');
        assert.deepEqual(await codeOf(await send(token, { 'content-type': 'text/plain', 'idempotency-key': randomUUID() }, 'x')), expected);
        assert.deepEqual(
          await codeOf(await send(token, { 'content-type': 'application/json', 'idempotency-key': 'nope' }, '{"x":')),
          expected,
        );
        assert.deepEqual(
          await codeOf(await send(token, { 'content-type': 'application/json', 'idempotency-key': randomUUID() }, '{"x":1}')),
          expected,
        );
      }
      assert.equal((await exchange(issued.client_secret)).status, 200, 'nothing rotated');
    });

    await t.test("an authenticated rotation counts against the client's rate limit, not its address's", async () => {
      const remaining = async (res: Response) => Number(res.headers.get('x-ratelimit-remaining'));
      const token = await tokenOf(issued.client_secret);
      const addressBefore = await remaining(await fetch(`${base}/v1/sgi/partners`));
      const clientBefore = await remaining(await fetch(`${base}/v1/orders`, { headers: { authorization: `Bearer ${token}` } }));
      const rotation = await rotate(token, null);
      assert.equal(rotation.status, 422);
      assert.equal(await remaining(rotation), clientBefore - 1, 'the headers give the client’s count');
      assert.equal(await remaining(await fetch(`${base}/v1/sgi/partners`)), addressBefore - 1, 'only the second public request counted');
    });

    await t.test('Idempotency-Key is required and must be a UUID; the body is empty', async () => {
      const token = await tokenOf(issued.client_secret);
      const missing = await rotate(token, null);
      assert.equal(missing.status, 422);
      assert.deepEqual(((await missing.json()) as Json).details[0], { field: 'Idempotency-Key', rule: 'required', value: null });
      assert.equal((await rotate(token, 'nope')).status, 422);
      assert.equal((await rotate(token, randomUUID(), { client_id: 'x' })).status, 422);
    });

    await t.test('a retry with the same Idempotency-Key returns the same secret and rotates nothing again', async () => {
      const token = await tokenOf(issued.client_secret);
      const key = randomUUID();
      const first = await rotate(token, key);
      const text = await first.text();
      assert.equal(first.status, 200, text);
      const secret = (JSON.parse(text) as Json).client_secret as string;
      clock.advance(60_000);
      const replay = await rotate(token, key, {});
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.headers.get('cache-control'), 'no-store');
      assert.equal(await replay.text(), text, 'the first response, byte for byte (no body is the same as {})');
      assert.equal((await exchange(secret)).status, 200, 'the secret replayed is the current one');
      const other = await rotate(token, key, { expire_previous: 'now' });
      assert.equal(other.status, 422);
      assert.equal(((await other.json()) as Json).details[0].rule, 'idempotency_key_reused');
      assert.equal((await exchange(secret)).status, 200, 'nothing rotated');
    });

    await t.test('returns the new secret once; the old one works for 24 hours, then fails', async () => {
      const res = await rotate(await tokenOf(issued.client_secret), randomUUID(), {});
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = (await res.json()) as Json;
      assert.deepEqual(Object.keys(body).sort(), ['client_id', 'client_secret', 'previous_secret_expires_at']);
      assert.equal(body.client_id, issued.client_id);
      assert.match(body.client_secret, /^sk_test_/);
      assert.notEqual(body.client_secret, issued.client_secret);
      assert.equal(body.previous_secret_expires_at, new Date(clock.now().getTime() + 24 * 3600_000).toISOString());
      assert.equal((await exchange(body.client_secret)).status, 200);
      assert.equal((await exchange(issued.client_secret)).status, 200, 'the old secret still works');
      clock.advance(24 * 3600_000 + 1);
      assert.equal((await exchange(issued.client_secret)).status, 401, 'the old secret has expired');
      assert.equal((await exchange(body.client_secret)).status, 200);
    });

    await t.test('a disabled client cannot rotate with a token it got before', async () => {
      const secret = (
        (await (await rotate(await tokenOf((await runtime.services.clients.rotateSecret(issued.client_id))!.client_secret))).json()) as Json
      ).client_secret as string;
      const token = await tokenOf(secret);
      await runtime.services.clients.setDisabled(issued.client_id, true);
      assert.equal((await rotate(token)).status, 401);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient } from '../support/api.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { ManualClock } from '../../src/lib/clock.js';

type Json = Record<string, any>;

// Every response under /v1/ carries X-RateLimit-Limit, -Remaining and -Reset, including the ones sent
// before a route's hooks run: CORS preflights (answered or refused first), paths the router cannot
// take, and refusals of the body (413, 415, a body that is not JSON).
for (const database of DATABASES) {
  describe(`X-RateLimit headers on every API response on ${database.name}`, () => {
    test('preflights carry the headers of the caller address without being counted; early refusals carry them too', async (t) => {
      // Mid-window, on a clock that does not move: every request below falls in one window.
      const clock = new ManualClock(new Date('2026-11-23T10:00:20.000Z'));
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none', CAURI_CORS_ORIGINS: 'https://app.example.com' }, { clock });
      const base = await listen(runtime);
      const limit = String(runtime.config.rateLimitPerMinute);
      const reset = String(Date.parse('2026-11-23T10:01:00.000Z') / 1000);
      const remainingOf = (res: Response, what: string): number => {
        assert.equal(res.headers.get('x-ratelimit-limit'), limit, `${what}: X-RateLimit-Limit`);
        assert.equal(res.headers.get('x-ratelimit-reset'), reset, `${what}: X-RateLimit-Reset`);
        const remaining = res.headers.get('x-ratelimit-remaining');
        assert.match(remaining ?? '', /^\d+$/, `${what}: X-RateLimit-Remaining`);
        return Number(remaining);
      };
      const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
        fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      const preflight = (path: string, origin: string, method: string) =>
        send('OPTIONS', path, { origin, 'access-control-request-method': method });

      // Preflights: answered or refused, they report the address's state and do not count.
      const first = await preflight('/v1/sgi/partners', 'http://x', 'GET');
      assert.equal(first.status, 204);
      const before = remainingOf(first, 'preflight of a public document');
      const refused = await preflight('/v1/auth/token', 'http://x', 'POST');
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as Json).code, 'forbidden');
      assert.equal(remainingOf(refused, 'refused preflight'), before, 'a preflight is not counted');
      const allowed = await preflight('/v1/orders', 'https://app.example.com', 'POST');
      assert.equal(allowed.status, 204);
      assert.equal(remainingOf(allowed, 'preflight of the API'), before, 'a preflight is not counted');
      // The request the first preflight announced counts against the same address.
      const partners = await send('GET', '/v1/sgi/partners', { origin: 'http://x' });
      assert.equal(partners.status, 200);
      assert.equal(remainingOf(partners, 'GET of a public document'), before - 1);

      // Answered before any route: unknown paths and methods, paths the router cannot take.
      let address = before - 1;
      for (const [method, path] of [
        ['GET', '/v1/nope'],
        ['OPTIONS', '/v1/orders'],
        ['PUT', '/v1/sgi/partners'],
        ['GET', '/v1/orders/%E0%A4%A'],
        ['GET', `/v1/subjects/${'a'.repeat(600)}/accounts`],
      ] as const) {
        const res = await send(method, path);
        const body = (await res.json()) as Json;
        assert.equal(res.status, 404, `${method} ${path.slice(0, 40)}: ${JSON.stringify(body).slice(0, 200)}`);
        assert.equal(body.code, 'not_found');
        assert.equal(body.request_id, res.headers.get('x-request-id'));
        assert.equal(remainingOf(res, `${method} ${path.slice(0, 40)}`), --address, 'counted against the address');
      }

      // The body refused before the route's handler: counted against the client of the token.
      const api = await apiClient(runtime, base);
      address--; // the token exchange counts against the address too
      const headers = { authorization: `Bearer ${api.token}`, 'idempotency-key': crypto.randomUUID() };
      let client: number | undefined;
      for (const [what, status, contentType, body] of [
        ['not JSON', 422, 'application/json', '{"rcpt_to":'],
        ['too large', 413, 'application/json', `{"note":"${'x'.repeat(70_000)}"}`],
        ['not application/json', 415, 'text/plain', 'qty=1'],
        ['too deep', 422, 'application/json', `${'['.repeat(40)}${']'.repeat(40)}`],
      ] as const) {
        const res = await send('POST', '/v1/orders', { ...headers, 'content-type': contentType }, body);
        assert.equal(res.status, status, what);
        const remaining = remainingOf(res, what);
        if (client !== undefined) assert.equal(remaining, client - 1, `${what}: counted against the client`);
        client = remaining;
      }
      for (const [status, contentType, body] of [
        [415, 'text/plain', 'grant_type=client_credentials'],
        [422, 'application/json', '{"grant_type":'],
      ] as const) {
        const res = await send('POST', '/v1/auth/token', { 'content-type': contentType }, body);
        assert.equal(res.status, status);
        assert.equal(remainingOf(res, `token endpoint ${status}`), --address);
      }
    });
  });
}

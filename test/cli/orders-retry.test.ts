import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json } from '../support/order-context.js';
import { runCli } from '../support/process.js';

// `cauri orders cancel` through a loopback proxy in front of the real service that answers the first
// attempts itself, as a service failing transiently or rate limiting would.
const BAOBAB = sandboxPartner('baobab');

type Answer = { status: number; retryAfter?: string; code: string };

async function frontWith(t: TestContext, base: string, answers: Answer[]) {
  const upstream = new URL(base);
  const attempts: { key: string; at: number }[] = [];
  const server = createServer((req, res) => {
    if (req.url?.endsWith('/cancel') === true) {
      attempts.push({ key: String(req.headers['idempotency-key']), at: Date.now() });
      const answer = answers.shift();
      if (answer !== undefined) {
        req.resume();
        const body = JSON.stringify({ code: answer.code, message: 'injected', request_id: 'req_injected' });
        res.writeHead(answer.status, {
          'content-type': 'application/json',
          ...(answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter }),
        });
        res.end(body);
        return;
      }
    }
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts };
}

// The retries are the command line's own, the same whatever database the service uses: the
// embedded one serves them.
for (const db of DATABASES.filter((d) => d.name === 'sqlite')) {
  test(`cauri orders cancel retries a 500 and a 429 with the same key, waiting each Retry-After in full (${db.name})`, async (t) => {
    const c = await orderContext(t, db);
    const att = await c.attestation();
    // An order that rests at the partner, so that it can be cancelled.
    const resting = async () =>
      (
        await c.order({
          rcpt_to: BAOBAB,
          kyc_attestation_id: att,
          instrument: 'KOLA.BRVM',
          side: 'buy',
          qty: 5,
          limit_price_cents: KOLA_RESTING,
        })
      ).body as Json;
    const order = await resting();
    const front = await frontWith(t, c.base, [
      { status: 500, code: 'internal_error' },
      { status: 429, retryAfter: '1', code: 'rate_limit_exceeded' },
      { status: 503, retryAfter: '6', code: 'service_unavailable' },
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'cauri-cli-retry-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      CAURI_CONFIG_DIR: dir,
      CAURI_API_URL: front.url,
      CAURI_CLIENT_ID: c.api.clientId,
      CAURI_CLIENT_SECRET: c.api.clientSecret,
    };
    const run = await runCli(['orders', 'cancel', order.id as string, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as Json;
    assert.deepEqual([answer.status, answer.order.status], [200, 'cancelled']);
    assert.equal(front.attempts.length, 4);
    assert.equal(new Set(front.attempts.map((a) => a.key)).size, 1, 'one Idempotency-Key for every attempt');
    const gaps = front.attempts.slice(1).map((a, i) => a.at - front.attempts[i]!.at);
    assert.ok(gaps[1]! >= 1000, `Retry-After: 1 waited, got ${gaps[1]} ms`);
    assert.ok(gaps[2]! >= 6000, `Retry-After: 6 waited in full, got ${gaps[2]} ms`);
    assert.equal((await c.events('order.cancelled', order.id as string)).length, 1, 'cancelled once');

    // A Retry-After beyond a minute is not waited for: the refusal is printed at once.
    const later = await resting();
    const slow = await frontWith(t, c.base, [{ status: 429, retryAfter: '120', code: 'rate_limit_exceeded' }]);
    const refused = await runCli(['orders', 'cancel', later.id as string], { ...env, CAURI_API_URL: slow.url });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /429 rate_limit_exceeded/);
    assert.equal(slow.attempts.length, 1);
  });
}

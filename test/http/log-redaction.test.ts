import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient } from '../support/api.js';

/** The JSON lines the runtime logs, as written. */
function logSink(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line);
      done();
    },
  });
  return { lines, destination };
}

// Credentials sent in a URL by mistake (the token endpoint reads them only from its body or Basic
// auth, the API reads tokens only from Authorization) must not reach the logs with the request line.
for (const database of DATABASES) {
  describe(`credentials in a request URL on ${database.name}`, () => {
    test('are logged as [Redacted]; the rest of the URL is kept', async (t) => {
      const sink = logSink();
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none', LOG_LEVEL: 'info' }, { logDestination: sink.destination });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['orders:read', 'webhooks:manage']);
      const secret = encodeURIComponent(api.clientSecret);

      const token = await fetch(`${base}/v1/auth/token?grant_type=client_credentials&client_id=${api.clientId}&client_secret=${secret}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(token.status, 422, 'credentials are read from the body only');
      const listed = await fetch(`${base}/v1/orders?limit=5&access_token=${api.token}`, {
        headers: { authorization: `Bearer ${api.token}` },
      });
      assert.equal(listed.status, 422, 'an unknown query parameter');
      const stray = await fetch(`${base}/v1/orders/${secret}?Client_Secret=x&note=${secret}`, {
        headers: { authorization: `Bearer ${api.token}` },
      });
      assert.ok(stray.status >= 400);
      const endpoint = await api.post('/v1/webhooks/endpoints', { url: 'https://hooks.example/in', events: ['webhook.test'] });
      const { secret: whsec } = (await endpoint.json()) as { secret: string };
      await fetch(`${base}/v1/webhooks/endpoints?signing=${whsec}`, { headers: { authorization: `Bearer ${api.token}` } });
      await runtime.app.close();

      const logged = sink.lines.join('\n');
      for (const value of [api.clientSecret, secret, api.token, whsec])
        assert.ok(!logged.includes(value), `logged: ${value.slice(0, 12)}...`);
      const urls = sink.lines.map((l) => (JSON.parse(l) as { req?: { url?: string } }).req?.url).filter((u) => u !== undefined);
      assert.ok(
        urls.includes(`/v1/auth/token?grant_type=client_credentials&client_id=${api.clientId}&client_secret=[Redacted]`),
        urls.join('\n'),
      );
      assert.ok(urls.includes('/v1/orders?limit=5&access_token=[Redacted]'));
      assert.ok(urls.includes('/v1/orders/sk_test_[Redacted]?Client_Secret=[Redacted]&note=sk_test_[Redacted]'));
      assert.ok(urls.includes('/v1/webhooks/endpoints?signing=whsec_[Redacted]'));
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient, KYC2_REQUEST } from '../support/api.js';

// Authenticated responses hold a client's data, and some a secret shown once: none may be kept by a
// browser's or a proxy's cache. Public documents stay cacheable.
for (const database of DATABASES) {
  describe(`Cache-Control and X-Content-Type-Options on ${database.name}`, () => {
    test('no-store on every authenticated answer, errors included; public documents keep their max-age', async (t) => {
      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'none' });
      const base = await listen(runtime);
      const api = await apiClient(runtime, base, ['webhooks:manage', 'kyc:write', 'kyc:read']);
      const noStore = (res: Response, what: string) => assert.equal(res.headers.get('cache-control'), 'no-store', what);

      const created = await api.post('/v1/webhooks/endpoints', { url: 'https://hooks.example/in', events: ['webhook.test'] });
      assert.equal(created.status, 201);
      const endpoint = (await created.json()) as { id: string; secret: string };
      assert.match(endpoint.secret, /^whsec_/);
      noStore(created, 'the creation, which shows the signing secret');
      const rotated = await api.post(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`, {});
      assert.equal(rotated.status, 200);
      noStore(rotated, 'the rotation, which shows the new secret');
      noStore(await api.call('GET', `/v1/webhooks/endpoints/${endpoint.id}`), 'a read');
      noStore(await api.call('GET', '/v1/webhooks/endpoints'), 'a listing');
      const attestation = await api.post('/v1/kyc/attestations', KYC2_REQUEST);
      assert.equal(attestation.status, 201);
      noStore(attestation, 'an attestation');
      noStore(await api.call('GET', '/v1/webhooks/endpoints/we_01m80z29k5e0dasx9k6j3atvaa'), 'a 404');
      noStore(await api.call('GET', '/v1/orders'), 'a 403 (missing scope)');
      noStore(await fetch(`${base}/v1/orders`, { headers: { authorization: 'Bearer nope' } }), 'a 401');
      // The event stream carries the client's events: no-store too (no-transform keeps proxies from
      // compressing, and so buffering, it).
      const stream = new AbortController();
      const streamed = await fetch(`${base}/v1/events/stream`, {
        headers: { authorization: `Bearer ${api.token}` },
        signal: stream.signal,
      });
      assert.equal(streamed.status, 200);
      assert.equal(streamed.headers.get('cache-control'), 'no-store, no-transform', 'the event stream');
      stream.abort();
      const head = await api.call('HEAD', '/v1/events/stream');
      assert.equal(head.headers.get('cache-control'), 'no-store, no-transform', 'the event stream (HEAD)');

      // Every response, public or not, error or not, forbids content sniffing.
      for (const res of [
        await api.call('GET', '/v1/webhooks/endpoints'),
        await api.call('GET', '/v1/events?type=%3Cscript%3Ealert(1)%3C%2Fscript%3E'),
        await fetch(`${base}/v1/sgi/partners`),
        await fetch(`${base}/v1/no-such-route/%3Cscript%3E`),
        await fetch(`${base}/v1/orders/%E0%A4%A`, { headers: { authorization: `Bearer ${api.token}` } }),
        await fetch(`${base}/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
      ])
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', res.url);
      // A request that is not valid HTTP is answered on the socket itself, with the same header.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(base).port), '127.0.0.1', () =>
          socket.end('GET /v1/orders?a=\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(raw, /^HTTP\/1\.1 422 /);
      assert.match(raw, /\r\nX-Content-Type-Options: nosniff\r\n/i);

      const crl = await fetch(`${base}/v1/kyc/crl`);
      assert.equal(crl.headers.get('cache-control'), 'public, max-age=900');
      const partners = await fetch(`${base}/v1/sgi/partners`);
      assert.notEqual(partners.headers.get('cache-control'), 'no-store');
    });
  });
}

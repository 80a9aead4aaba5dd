import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseTraceparent, uuidHexOfId } from '../../src/lib/trace-context.js';
import { KYC2_REQUEST } from '../support/api.js';
import { DATABASES } from '../support/harness.js';
import { orderContext, sandboxPartner, type Json } from '../support/order-context.js';
import { startDeliveryWorker } from '../support/delivery-worker.js';

interface Hooks {
  url: string;
  received: { headers: IncomingHttpHeaders; body: string }[];
}

/** A webhook receiver on loopback that answers 500 to the first attempt of each delivery, then 200. */
async function failingOnce(t: TestContext): Promise<Hooks> {
  const hooks: Hooks = { url: '', received: [] };
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hooks.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const key = String(req.headers['x-cauri-idempotency-key']);
      res.writeHead(seen.has(key) ? 200 : 500).end();
      seen.add(key);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  hooks.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return hooks;
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

for (const database of DATABASES) {
  test(`${database.name}: webhooks carry the trace and the request id of the API request that caused their event`, async (t) => {
    const c = await orderContext(t, database);
    const worker = startDeliveryWorker(t, c.runtime, c.clock, { timeoutMs: 2000 });
    // The receiver fails the first attempt of each delivery, so that each is also seen on its retry.
    const hooks = await failingOnce(t);
    const endpoint = await c.post('/v1/webhooks/endpoints', {
      url: hooks.url,
      events: ['kyc.attested', 'kyc.revoked', 'order.created', 'order.routed', 'order.executed'],
    });
    assert.equal(endpoint.status, 201);

    const post = (path: string, body: unknown, headers: Record<string, string>) =>
      c.api.call('POST', path, body, { 'idempotency-key': randomUUID(), ...headers });
    const attested = await post('/v1/kyc/attestations', KYC2_REQUEST, { 'x-request-id': 'kyc-run-1' });
    assert.equal(attested.status, 201);
    const attestationRequest = attested.headers.get('x-request-id') as string;
    const att = (await attested.json()) as Json;

    const traced = await post(
      '/v1/orders',
      { rcpt_to: sandboxPartner('baobab'), kyc_attestation_id: att.id, instrument: 'KOLA.BRVM', side: 'buy', qty: 2 },
      { 'x-request-id': 'gw-17', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' },
    );
    assert.equal(traced.status, 201);
    const tracedOrder = (await traced.json()) as Json;
    assert.equal(tracedOrder.status, 'routed', 'handed over within the request');
    const tracedRequest = traced.headers.get('x-request-id') as string;
    assert.notEqual(tracedRequest, 'gw-17');

    const plain = await post(
      '/v1/orders',
      {
        rcpt_to: sandboxPartner('baobab'),
        kyc_attestation_id: att.id,
        instrument: 'KOLA.BRVM',
        side: 'buy',
        qty: 1,
        limit_price_cents: 1_433_750,
      },
      {},
    );
    assert.equal(plain.status, 201);
    const plainOrder = (await plain.json()) as Json;
    const plainRequest = plain.headers.get('x-request-id') as string;

    // A revocation, and a test event (delivered to its endpoint only), each with the caller's id.
    const other = (await (await post('/v1/kyc/attestations', { ...KYC2_REQUEST, subject_id: 'inv-0002' }, {})).json()) as Json;
    const revoked = await post(`/v1/kyc/attestations/${other.id}/revoke`, { reason: 'superseded' }, { 'x-request-id': 'revoke-9' });
    assert.equal(revoked.status, 200);
    const tested = await post(
      `/v1/webhooks/endpoints/${endpoint.body.id}/test`,
      { type: 'webhook.test' },
      { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` },
    );
    assert.equal(tested.status, 202);
    const testRequest = tested.headers.get('x-request-id') as string;

    // The market order fills on the simulated exchange: an event no request caused.
    await c.tick(1500);
    // A few attempts at a time per endpoint; the retries are due at once.
    for (let pass = 0; pass < 20 && (await worker.runOnce()).attempted > 0; pass++);

    const seen = hooks.received.map((r) => ({ body: JSON.parse(r.body) as Json, headers: r.headers }));
    const of = (type: string, orderId?: string) =>
      seen.filter((s) => s.body.type === type && (orderId === undefined || s.body.data.id === orderId || s.body.data.order_id === orderId));
    const spans = new Set<string>();
    const check = (
      deliveries: typeof seen,
      expected: { trace: string; requestId: string | undefined; tracestate?: string; flags?: string },
      what: string,
    ) => {
      assert.equal(deliveries.length, 2, `${what}: a failed attempt and its retry`);
      for (const { headers } of deliveries) {
        const parent = parseTraceparent(headers.traceparent);
        assert.ok(parent !== null, `${what}: ${String(headers.traceparent)}`);
        assert.equal(parent.traceId, expected.trace, what);
        assert.equal(parent.flags, expected.flags ?? '01', `${what}: the caller's sampling decision is kept`);
        assert.ok(!spans.has(parent.parentId), `${what}: a span of its own per attempt`);
        spans.add(parent.parentId);
        assert.equal(headers['x-request-id'], expected.requestId, what);
        assert.equal(headers.tracestate, expected.tracestate, what);
      }
    };

    // The caller's trace and its own request id.
    check(of('order.created', tracedOrder.id), { trace: CALLER_TRACE, requestId: 'gw-17', tracestate: 'vendor=abc' }, 'order.created');
    check(of('order.routed', tracedOrder.id), { trace: CALLER_TRACE, requestId: 'gw-17', tracestate: 'vendor=abc' }, 'order.routed');
    assert.ok(
      !spans.has(CALLER_SPAN) && !spans.has(uuidHexOfId(tracedRequest).slice(16)),
      "the deliveries' spans are new, children of the request's",
    );
    // No traceparent sent: the trace the service started for the request, named after its request id.
    check(
      of('kyc.attested').filter((d) => d.body.data.id === att.id),
      { trace: uuidHexOfId(attestationRequest), requestId: 'kyc-run-1' },
      'kyc.attested',
    );
    check(of('kyc.revoked'), { trace: uuidHexOfId(revoked.headers.get('x-request-id') as string), requestId: 'revoke-9' }, 'kyc.revoked');
    check(of('webhook.test'), { trace: CALLER_TRACE, requestId: testRequest, flags: '00' }, 'webhook.test');
    check(of('order.created', plainOrder.id), { trace: uuidHexOfId(plainRequest), requestId: plainRequest }, 'order.created without ids');
    // Caused by no request: a trace of its own per event, named after the event.
    const executed = of('order.executed', tracedOrder.id);
    check(executed, { trace: uuidHexOfId(executed[0]?.body.id as string), requestId: undefined }, 'order.executed');

    // The origin is stored with the event, as the request gave it.
    const rows = await c.runtime.storage.db
      .selectFrom('events')
      .select(['type', 'origin', 'subject_ref'])
      .where('subject_ref', '=', tracedOrder.id)
      .orderBy('id')
      .execute();
    const origins = Object.fromEntries(
      rows.map((r) => [r.type, r.origin === null || r.origin === undefined ? null : (JSON.parse(r.origin) as Json)]),
    );
    assert.deepEqual(origins['order.created'], {
      request_id: tracedRequest,
      client_request_id: 'gw-17',
      traceparent: `00-${CALLER_TRACE}-${uuidHexOfId(tracedRequest).slice(16)}-01`,
      tracestate: 'vendor=abc',
    });
    assert.deepEqual(origins['order.routed'], origins['order.created']);
    assert.equal(origins['order.executed'], null);
  });
}

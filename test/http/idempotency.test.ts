import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Runtime } from '../../src/app.js';
import { IDEMPOTENCY_LEASE_MS } from '../../src/idempotency/idempotency.service.js';
import { ManualClock } from '../../src/lib/clock.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import type { OrderForPartner } from '../../src/routing/connector.js';
import { KYC2_REQUEST, apiClient, type ApiClient } from '../support/api.js';
import { KOLA_RESTING } from '../support/order-context.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment, type DatabaseCase } from '../support/harness.js';

type Json = Record<string, any>;
const BAOBAB = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id ?? '';
const KYC3 = {
  ...KYC2_REQUEST,
  subject_id: 'qualified-1',
  level: 'KYC3',
  jurisdictions: ['UEMOA'],
  verifications: [
    ...KYC2_REQUEST.verifications,
    { type: 'source_of_funds', verified_at: '2026-11-20T09:04:00Z' },
    { type: 'pep', verified_at: '2026-11-20T09:05:00Z' },
  ],
};

interface Setup {
  runtime: Runtime;
  api: ApiClient;
  clock: ManualClock;
  /** Another process of the deployment (same database and keys), with its own base URL. */
  other: { runtime: Runtime; base: string };
  order: Json;
}

async function setup(t: TestContext, database: DatabaseCase): Promise<Setup> {
  const clock = new ManualClock(new Date());
  const e = testEnvironment(t, database, { CAURI_WORKERS: 'none' }, { clock });
  const runtime = await startRuntimeIn(t, e);
  const api = await apiClient(runtime, await listen(runtime));
  const otherRuntime = await startRuntimeIn(t, e);
  const other = { runtime: otherRuntime, base: await listen(otherRuntime) };
  const attestation = ((await (await api.post('/v1/kyc/attestations', KYC3)).json()) as Json).id as string;
  return {
    runtime,
    api,
    clock,
    other,
    order: { rcpt_to: BAOBAB, kyc_attestation_id: attestation, instrument: 'KOLA.BRVM', side: 'buy', qty: 2 },
  };
}

/** Holds every hand-over to the sandbox partner of `runtime` until released: a slow partner. */
function slowPartner(runtime: Runtime): { reached: Promise<void>; release: () => void } {
  const connector = runtime.services.connectors.get('sandbox', BAOBAB) ?? assert.fail('no sandbox connector');
  const submit = connector.submit.bind(connector);
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  connector.submit = async (order: OrderForPartner) => {
    reach();
    await released;
    return submit(order);
  };
  return { reached, release };
}

/** Holds every cancel or amend sent to the sandbox partner of `runtime` until released. */
function slowRequests(runtime: Runtime, method: 'cancel' | 'amend'): { reached: Promise<void>; release: () => void } {
  const connector = runtime.services.connectors.get('sandbox', BAOBAB) ?? assert.fail('no sandbox connector');
  const send = connector[method].bind(connector) as (...args: unknown[]) => Promise<unknown>;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  (connector as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    reach();
    await released;
    return send(...args);
  };
  return { reached, release };
}

function postTo(base: string, api: ApiClient, path: string, body: unknown, key: string): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
}

async function assertInFlight(res: Response): Promise<void> {
  // Read first: an unread body would hold its connection open, and the server's close with it.
  const body = (await res.json()) as Json;
  assert.equal(res.status, 409, JSON.stringify(body));
  assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(body.code, 'conflict');
}

for (const database of DATABASES) {
  describe(`idempotency over HTTP on ${database.name}`, () => {
    test('a replay while the order is with a slow partner gets 409, then exactly the answer the first request gave', async (t) => {
      const s = await setup(t, database);
      const partner = slowPartner(s.runtime);
      const key = randomUUID();
      const pending = s.api.post('/v1/orders', s.order, key);
      try {
        await partner.reached;
        // The order is committed and being handed over: in this process and in another one, 409.
        await assertInFlight(await s.api.post('/v1/orders', s.order, key));
        await assertInFlight(await postTo(s.other.base, s.api, '/v1/orders', s.order, key));
        partner.release();
        const first = await pending;
        const text = await first.text();
        assert.equal(first.status, 201);
        assert.equal(JSON.parse(text).status, 'routed');
        for (const res of [await s.api.post('/v1/orders', s.order, key), await postTo(s.other.base, s.api, '/v1/orders', s.order, key)]) {
          assert.equal(res.status, 201);
          assert.equal(res.headers.get('idempotent-replayed'), 'true');
          assert.equal(await res.text(), text, 'byte for byte the first answer');
        }
        assert.equal((await s.runtime.storage.db.selectFrom('orders').select('id').execute()).length, 1);
      } finally {
        // After a failed assertion too: the request must not stay with the partner, nor its answer
        // unread (either would hold the server's close).
        partner.release();
        const res = await pending;
        if (!res.bodyUsed) await res.body?.cancel();
      }
    });

    test('a request stuck past its lease: another process settles its committed answer, and the late request answers the same', async (t) => {
      const s = await setup(t, database);
      const partner = slowPartner(s.runtime);
      const key = randomUUID();
      const pending = s.api.post('/v1/orders', s.order, key);
      try {
        await partner.reached;
        s.clock.advance(IDEMPOTENCY_LEASE_MS - 1);
        await assertInFlight(await postTo(s.other.base, s.api, '/v1/orders', s.order, key));
        s.clock.advance(1);
        // For the other process the holder may have died: the order as committed is the answer.
        const settled = await postTo(s.other.base, s.api, '/v1/orders', s.order, key);
        const text = await settled.text();
        assert.equal(settled.status, 201);
        assert.equal(settled.headers.get('idempotent-replayed'), 'true');
        assert.equal(JSON.parse(text).status, 'created');
        // The holder's own process knows it is alive.
        await assertInFlight(await s.api.post('/v1/orders', s.order, key));
        partner.release();
        const late = await pending;
        assert.equal(late.status, 201);
        assert.equal(await late.text(), text, 'the late request answers what was settled');
        assert.equal(await (await s.api.post('/v1/orders', s.order, key)).text(), text);
        assert.equal((await s.runtime.storage.db.selectFrom('orders').select('id').execute()).length, 1);
      } finally {
        // After a failed assertion too: the request must not stay with the partner, nor its answer
        // unread (either would hold the server's close).
        partner.release();
        const res = await pending;
        if (!res.bodyUsed) await res.body?.cancel();
      }
    });

    for (const [method, body, check] of [
      ['cancel', {}, (o: Json) => o.status === 'cancelled' && o.cancel_reason === 'requested'],
      ['amend', { qty: 3 }, (o: Json) => o.status === 'routed' && o.qty === 3],
    ] as const) {
      test(`a replay of a ${method} while the partner is asked gets 409, then exactly the first answer, 200 and not 202`, async (t) => {
        const s = await setup(t, database);
        const placed = (await (await s.api.post('/v1/orders', { ...s.order, limit_price_cents: KOLA_RESTING })).json()) as Json;
        assert.equal(placed.status, 'routed', JSON.stringify(placed));
        const path = `/v1/orders/${placed.id}/${method}`;
        const partner = slowRequests(s.runtime, method);
        const key = randomUUID();
        const pending = s.api.post(path, body, key);
        try {
          await partner.reached;
          // The request is committed (the order shows it pending) and is with the partner: 409 everywhere.
          await assertInFlight(await s.api.post(path, body, key));
          await assertInFlight(await postTo(s.other.base, s.api, path, body, key));
          partner.release();
          const first = await pending;
          const text = await first.text();
          assert.equal(first.status, 200, text);
          assert.ok(check(JSON.parse(text) as Json), text);
          for (const res of [await s.api.post(path, body, key), await postTo(s.other.base, s.api, path, body, key)]) {
            assert.equal(res.status, 200, 'the status the first request answered');
            assert.equal(res.headers.get('idempotent-replayed'), 'true');
            assert.equal(await res.text(), text, 'byte for byte the first answer');
          }
        } finally {
          partner.release();
          const res = await pending;
          if (!res.bodyUsed) await res.body?.cancel();
        }
      });
    }

    test('a cancel stuck past its lease: another process settles its committed 202, and the late request answers the same', async (t) => {
      const s = await setup(t, database);
      const placed = (await (await s.api.post('/v1/orders', { ...s.order, limit_price_cents: KOLA_RESTING })).json()) as Json;
      const path = `/v1/orders/${placed.id}/cancel`;
      const partner = slowRequests(s.runtime, 'cancel');
      const key = randomUUID();
      const pending = s.api.post(path, {}, key);
      try {
        await partner.reached;
        s.clock.advance(IDEMPOTENCY_LEASE_MS);
        const settled = await postTo(s.other.base, s.api, path, {}, key);
        const text = await settled.text();
        assert.equal(settled.status, 202, text);
        assert.equal(settled.headers.get('idempotent-replayed'), 'true');
        assert.equal(JSON.parse(text).pending_request, 'pending_cancel');
        partner.release();
        const late = await pending;
        assert.equal(late.status, 202, 'the settled status, though the partner confirmed the cancel');
        assert.equal(await late.text(), text);
        assert.equal(
          (await s.runtime.storage.db.selectFrom('orders').select('status').where('id', '=', placed.id).executeTakeFirstOrThrow()).status,
          'cancelled',
        );
      } finally {
        partner.release();
        const res = await pending;
        if (!res.bodyUsed) await res.body?.cancel();
      }
    });

    test('a missing or malformed Idempotency-Key is the error reported, whatever the body holds', async (t) => {
      const s = await setup(t, database);
      const paths = ['/v1/orders', '/v1/kyc/attestations', '/v1/webhooks/endpoints', '/v1/orders/ord_x/cancel'];
      const bodies: (string | undefined)[] = ['{"unknown":1}', '[]', 'null', undefined];
      for (const path of paths) {
        for (const body of bodies) {
          for (const [key, rule] of [
            [undefined, 'required'],
            ['not-a-uuid', 'format'],
          ] as const) {
            const res = await s.api.call('POST', path, body, key === undefined ? {} : { 'idempotency-key': key });
            const error = (await res.json()) as Json;
            const label = `${path} ${body} ${key}`;
            assert.equal(res.status, 422, label);
            assert.deepEqual(
              error.details.map(({ field, rule: r, value }: Json) => ({ field, rule: r, value })),
              [{ field: 'Idempotency-Key', rule, value: key ?? null }],
              label,
            );
          }
        }
      }
    });

    test('a lone surrogate in any text of an idempotent POST is 422 unicode naming the field, on every retry; the key stays free', async (t) => {
      const s = await setup(t, database);
      const attestation = { ...KYC2_REQUEST, subject_id: 'u-1' };
      const cases: [string, unknown, string][] = [
        ['/v1/orders', { ...s.order, client_metadata: { note: 'a\udfffb' } }, 'client_metadata.note'],
        ['/v1/orders', { ...s.order, client_metadata: { tags: ['ok', { '\udc00k': 1 }] } }, 'client_metadata.tags.1.\ufffdk'],
        [
          '/v1/kyc/attestations',
          {
            ...attestation,
            verifications: [{ ...KYC2_REQUEST.verifications[0], method: '\udfff' }, ...KYC2_REQUEST.verifications.slice(1)],
          },
          'verifications.0.method',
        ],
        [
          '/v1/webhooks/endpoints',
          { url: 'https://hooks.example.com/cauri', events: ['order.created'], description: 'Back \ud800office' },
          'description',
        ],
      ];
      for (const [path, body, field] of cases) {
        const key = randomUUID();
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await s.api.post(path, body, key);
          const bytes = new Uint8Array(await res.arrayBuffer());
          assert.equal(res.status, 422, `${path} ${field}`);
          // The error body is valid UTF-8 and names the field with U+FFFD in place of the surrogate.
          const error = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Json;
          assert.equal(error.code, 'validation_error');
          assert.equal(error.details[0].field, field);
          assert.equal(error.details[0].rule, 'unicode');
          assert.doesNotMatch(JSON.stringify(error), /\\ud[89a-f]/i);
        }
        // Nothing was stored under the key: the corrected request takes it.
        const fixed = JSON.parse(JSON.stringify(body).replace(/\\ud[89a-f][0-9a-f]{2}/gi, 'x')) as Json;
        const ok = await s.api.post(path, fixed, key);
        assert.equal(ok.status, 201, await ok.text());
      }
      const stored = await s.runtime.storage.db
        .selectFrom('idempotency_keys')
        .select('key')
        .where('client_id', '=', s.api.clientId)
        .execute();
      assert.equal(stored.length, 1 + cases.length, 'the setup attestation and each corrected request');
    });

    test('a lone surrogate in an endpoint update is 422 and changes nothing', async (t) => {
      const s = await setup(t, database);
      const endpoint = (await (
        await s.api.post('/v1/webhooks/endpoints', {
          url: 'https://hooks.example.com/cauri',
          events: ['order.created'],
          description: 'Back office',
        })
      ).json()) as Json;
      const res = await s.api.call('PATCH', `/v1/webhooks/endpoints/${endpoint.id}`, { description: '\udfff' });
      assert.equal(res.status, 422);
      assert.deepEqual(((await res.json()) as Json).details[0], {
        field: 'description',
        rule: 'unicode',
        value: '\ufffd',
        message: 'the string holds a lone UTF-16 surrogate (U+DFFF) at index 0; text must be valid Unicode',
      });
      assert.equal(((await (await s.api.call('GET', `/v1/webhooks/endpoints/${endpoint.id}`)).json()) as Json).description, 'Back office');
    });
  });
}

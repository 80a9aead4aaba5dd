import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Scope } from '../../src/auth/scopes.js';
import { SnapshotWorker } from '../../src/workers/snapshot-worker.js';
import { KYC2_REQUEST } from '../support/api.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { KOLA_RESTING, KYC3_REQUEST, orderContext, sandboxPartner } from '../support/order-context.js';
import { OperationWalk } from '../support/operation-walk.js';
import { startDeliveryWorker } from '../support/delivery-worker.js';

const BAOBAB = sandboxPartner('baobab');

/**
 * Statuses that no request of a well-behaved client can bring about here, each covered elsewhere.
 * Everything else the document lists for an operation is exercised below.
 */
const EXEMPT: Record<string, string> = {
  '408': 'a request that does not arrive in time (test/http/slow-clients.test.ts)',
  '500': 'an unexpected failure (test/http/faults.test.ts)',
  '503': 'the database out of reach (test/http/faults.test.ts)',
  '409': 'besides the conflicts of state exercised here, a request whose Idempotency-Key is still running (test/http/idempotency.test.ts)',
  '429': 'exercised on every operation by the next test, on a deployment with a limit of one request',
};

/** Scopes for a token that lacks `scope`. */
function otherScopes(scope: string): Scope[] {
  return [scope === 'kyc:read' ? 'orders:read' : 'kyc:read'];
}

/**
 * A client generated from the published document alone walks every operation of it over HTTP: the
 * success of each, and each error status it lists, every response checked against the document
 * (status, headers, body, no undocumented member). The test fails when an operation or a listed
 * status goes unexercised, so a new operation needs its requests here.
 */
for (const database of DATABASES) {
  describe(`every operation of the published document on ${database.name}`, () => {
    test('each is exercised, its success and each listed error, and every response matches the document', async (t) => {
      const c = await orderContext(t, database);
      const document = (await (await fetch(`${c.base}/v1/openapi.json`)).json()) as Record<string, any>;
      const walk = new OperationWalk(c.base, document, c.api.token);
      const issue = async (scopes: Scope[] | string[]) => {
        const client = await c.runtime.services.clients.create('walk', scopes as Scope[]);
        const res = await walk.expect(200, 'createAccessToken', {
          body: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret },
          token: null,
        });
        return { ...client, token: res.body.access_token as string };
      };
      const operator = await issue(['operator:read']);
      const deliveries = startDeliveryWorker(t, c.runtime, c.clock, { timeoutMs: 500 });
      const tokens = new Map<string, string>();
      const otherScopeToken = async (scope: string) => {
        const scopes = otherScopes(scope);
        if (!tokens.has(scope)) tokens.set(scope, (await issue(scopes)).token);
        return tokens.get(scope)!;
      };

      // Public directory, markets and keys.
      const partners = await walk.expect(200, 'listPartners', { path: '/v1/sgi/partners?limit=1' });
      assert.notEqual(partners.headers.get('x-cursor-next'), '');
      await walk.expect(422, 'listPartners', { path: '/v1/sgi/partners?cursor=forged' });
      await walk.expect(200, 'getPartner', { path: `/v1/sgi/partners/${BAOBAB}` });
      await walk.expect(404, 'getPartner', { path: '/v1/sgi/partners/sgi_nope' });
      await walk.expect(200, 'listInstruments', { path: '/v1/instruments?exchange=BRVM' });
      await walk.expect(422, 'listInstruments', { path: '/v1/instruments?exchange=NOPE' });
      await walk.expect(200, 'getInstrument', { path: '/v1/instruments/KOLA.BRVM' });
      await walk.expect(404, 'getInstrument', { path: '/v1/instruments/NOPE.BRVM' });
      await walk.expect(200, 'listExchanges');
      await walk.expect(200, 'getExchangeCalendar', { path: '/v1/exchanges/BRVM/calendar?from=2026-11-23&to=2026-11-30' });
      await walk.expect(422, 'getExchangeCalendar', { path: '/v1/exchanges/BRVM/calendar?from=2026-11-30&to=2026-11-23' });
      await walk.expect(404, 'getExchangeCalendar', { path: '/v1/exchanges/NOPE/calendar' });
      await walk.expect(200, 'getExchangeClock', { path: '/v1/exchanges/BRVM/clock' });
      await walk.expect(404, 'getExchangeClock', { path: '/v1/exchanges/NOPE/clock' });
      for (const id of [
        'checkLiveness',
        'checkReadiness',
        'getMetrics',
        'getOpenApiDocument',
        'getAccessTokenKeys',
        'getIssuerKeyDocument',
      ])
        await walk.expect(200, id);
      await walk.expect(200, 'getAuthorizationServerMetadata');

      // Tokens: bad credentials, a malformed request.
      await walk.expect(401, 'createAccessToken', {
        token: null,
        body: { grant_type: 'client_credentials', client_id: operator.client_id, client_secret: 'sk_test_wrong' },
      });
      await walk.expect(422, 'createAccessToken', { token: null, body: { grant_type: 'password' } });

      // Attestations and the revocation list.
      const attestation = await walk.expect(201, 'createAttestation', { body: KYC3_REQUEST });
      const att = attestation.body.id as string;
      await walk.expect(422, 'createAttestation', { body: { ...KYC2_REQUEST, level: 'KYC3' } });
      await walk.expect(200, 'getAttestation', { path: `/v1/kyc/attestations/${att}` });
      await walk.expect(404, 'getAttestation', { path: '/v1/kyc/attestations/att_nope' });
      await walk.expect(200, 'getAttestationStatus', { path: `/v1/kyc/attestations/${att}/status` });
      await walk.expect(404, 'getAttestationStatus', { path: '/v1/kyc/attestations/att_nope/status' });
      const other = (await walk.expect(201, 'createAttestation', { body: { ...KYC2_REQUEST, subject_id: 'revoked-1' } })).body.id;
      await walk.expect(200, 'revokeAttestation', { path: `/v1/kyc/attestations/${other}/revoke`, body: { reason: 'other' } });
      await walk.expect(200, 'revokeAttestation', { path: `/v1/kyc/attestations/${other}/revoke` });
      await walk.expect(404, 'revokeAttestation', { path: '/v1/kyc/attestations/att_nope/revoke', body: {} });
      const crl = await walk.expect(200, 'getRevocationList');
      await walk.expect(304, 'getRevocationList', { headers: { 'if-none-match': crl.headers.get('etag') ?? '' } });
      await walk.expect(200, 'getRevocationList', { path: '/v1/kyc/crl?since=0' });
      await walk.expect(422, 'getRevocationList', { path: '/v1/kyc/crl?since=x' });

      // Orders: one resting limit, one that fills.
      const order = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 5 };
      const resting = (
        await walk.expect(201, 'createOrder', {
          body: { ...order, limit_price_cents: KOLA_RESTING, submitted_at: '2026-11-23T10:00:00.000Z', client_metadata: { a: 1 } },
        })
      ).body;
      await walk.expect(422, 'createOrder', { body: { ...order, qty: 0 } });
      // A retry with the same key and body is the first answer, marked replayed; another body is refused.
      const key = crypto.randomUUID();
      const first = await walk.expect(201, 'createOrder', { key, body: { ...order, qty: 1 } });
      const replay = await walk.expect(201, 'createOrder', { key, body: { ...order, qty: 1 } });
      assert.deepEqual([replay.headers.get('idempotent-replayed'), replay.body], ['true', first.body]);
      const reused = await walk.expect(422, 'createOrder', { key, body: { ...order, qty: 2 } });
      assert.equal(reused.body.details?.[0]?.rule, 'idempotency_key_reused');
      const unknown = await walk.expect(422, 'createOrder', { body: { ...order, placed_by: 'desk' } });
      assert.deepEqual(unknown.body.details?.[0]?.rule, 'additionalProperties');
      const filled = (await walk.expect(201, 'createOrder', { body: { ...order, instrument: 'CIMSN.BRVM', qty: 3000 } })).body;
      for (let i = 0; i < 12; i++) await c.tick(1000);
      await walk.expect(200, 'listOrders', { path: '/v1/orders?limit=1' });
      await walk.expect(422, 'listOrders', { path: '/v1/orders?status=nope' });
      await walk.expect(200, 'getOrder', { path: `/v1/orders/${filled.id}` });
      await walk.expect(404, 'getOrder', { path: '/v1/orders/ord_nope' });
      await walk.expect(200, 'listOrderFills', { path: `/v1/orders/${filled.id}/fills` });
      await walk.expect(404, 'listOrderFills', { path: '/v1/orders/ord_nope/fills' });
      await walk.expect(200, 'getContractNote', { path: `/v1/orders/${filled.id}/contract-note` });
      await walk.expect(200, 'getContractNote', { path: `/v1/orders/${filled.id}/contract-note`, headers: { accept: 'application/pdf' } });
      await walk.expect(422, 'getContractNote', { path: `/v1/orders/${filled.id}/contract-note?lang=xx` });
      await walk.expect(409, 'getContractNote', { path: `/v1/orders/${resting.id}/contract-note` });
      await walk.expect(404, 'getContractNote', { path: '/v1/orders/ord_nope/contract-note' });
      await walk.expect(200, 'amendOrder', { path: `/v1/orders/${resting.id}/amend`, body: { qty: 6 } });
      await walk.expect(422, 'amendOrder', { path: `/v1/orders/${resting.id}/amend`, body: { qty: 7, limit_price_cents: 1 } });
      await walk.expect(404, 'amendOrder', { path: '/v1/orders/ord_nope/amend', body: { qty: 6 } });
      await walk.expect(409, 'amendOrder', { path: `/v1/orders/${filled.id}/amend`, body: { qty: 6000 } });
      await walk.expect(200, 'cancelOrder', { path: `/v1/orders/${resting.id}/cancel` });
      await walk.expect(409, 'cancelOrder', { path: `/v1/orders/${filled.id}/cancel`, body: {} });
      await walk.expect(404, 'cancelOrder', { path: '/v1/orders/ord_nope/cancel' });

      // Investor accounts, positions and statements.
      const account = `/v1/subjects/qualified-1/accounts/${BAOBAB}`;
      await walk.expect(201, 'setInvestorAccount', { path: account, body: { account_number: 'CI-1' } });
      await walk.expect(200, 'setInvestorAccount', { path: account, body: { account_number: 'CI-2' } });
      await walk.expect(404, 'setInvestorAccount', {
        path: '/v1/subjects/qualified-1/accounts/sgi_nope',
        body: { account_number: 'CI-2' },
      });
      await walk.expect(200, 'getInvestorAccount', { path: account });
      await walk.expect(422, 'getInvestorAccount', { path: `/v1/subjects/not%20valid/accounts/${BAOBAB}` });
      await walk.expect(200, 'listInvestorAccounts', { path: '/v1/subjects/qualified-1/accounts' });
      await walk.expect(422, 'listInvestorAccounts', { path: '/v1/subjects/not%20valid/accounts' });
      await walk.expect(204, 'deleteInvestorAccount', { path: account });
      await walk.expect(404, 'getInvestorAccount', { path: account });
      await walk.expect(404, 'deleteInvestorAccount', { path: account });
      await walk.expect(200, 'listPositions', { path: '/v1/positions?subject_id=qualified-1' });
      await walk.expect(422, 'listPositions', { path: '/v1/positions?subject_id=not%20valid' });
      const holdings = [{ instrument: 'KOLA.BRVM', qty: 100, average_cost_cents: 1_500_000 }];
      const statement = { subject_id: 'qualified-1', rcpt_to: BAOBAB, as_of: '2026-11-20', holdings };
      const stmt = (await walk.expect(201, 'createStatement', { body: statement })).body;
      await walk.expect(422, 'createStatement', { body: { ...statement, as_of: '2030-01-01' } });
      await walk.expect(200, 'listStatements');
      await walk.expect(200, 'getStatement', { path: `/v1/positions/statements/${stmt.id}` });
      await walk.expect(404, 'getStatement', { path: '/v1/positions/statements/stm_nope' });

      // Test clocks.
      const clock = (await walk.expect(201, 'createTestClock', { body: { frozen_time: '2026-11-23T10:00:00.000Z' } })).body;
      await walk.expect(422, 'createTestClock', { body: { frozen_time: '1990-01-01T00:00:00.000Z' } });
      await walk.expect(200, 'listTestClocks');
      await walk.expect(200, 'getTestClock', { path: `/v1/test-clocks/${clock.id}` });
      await walk.expect(404, 'getTestClock', { path: '/v1/test-clocks/clock_nope' });
      const advance = { frozen_time: '2026-11-23T11:00:00.000Z' };
      await walk.expect(200, 'advanceTestClock', { path: `/v1/test-clocks/${clock.id}/advance`, body: advance });
      await walk.expect(422, 'advanceTestClock', {
        path: `/v1/test-clocks/${clock.id}/advance`,
        body: { frozen_time: '2026-11-23T09:00:00.000Z' },
      });
      await walk.expect(404, 'advanceTestClock', { path: '/v1/test-clocks/clock_nope/advance', body: advance });
      await walk.expect(200, 'deleteTestClock', { path: `/v1/test-clocks/${clock.id}` });
      await walk.expect(404, 'deleteTestClock', { path: `/v1/test-clocks/${clock.id}` });

      // Webhooks and events.
      const created = await walk.expect(201, 'createWebhookEndpoint', {
        body: { url: 'http://127.0.0.1:9/hook', events: ['webhook.test', 'order.created'] },
      });
      const ep = created.body.id as string;
      await walk.expect(422, 'createWebhookEndpoint', { body: { url: 'ftp://x', events: ['webhook.test'] } });
      await walk.expect(200, 'listWebhookEndpoints');
      await walk.expect(200, 'getWebhookEndpoint', { path: `/v1/webhooks/endpoints/${ep}` });
      await walk.expect(404, 'getWebhookEndpoint', { path: '/v1/webhooks/endpoints/we_nope' });
      await walk.expect(200, 'updateWebhookEndpoint', { path: `/v1/webhooks/endpoints/${ep}`, body: { description: 'walk' } });
      await walk.expect(404, 'updateWebhookEndpoint', { path: '/v1/webhooks/endpoints/we_nope', body: { description: 'walk' } });
      await walk.expect(200, 'rotateWebhookEndpointSecret', { path: `/v1/webhooks/endpoints/${ep}/rotate-secret` });
      await walk.expect(404, 'rotateWebhookEndpointSecret', { path: '/v1/webhooks/endpoints/we_nope/rotate-secret' });
      await walk.expect(202, 'sendWebhookTestEvent', { path: `/v1/webhooks/endpoints/${ep}/test`, body: {} });
      await walk.expect(404, 'sendWebhookTestEvent', { path: '/v1/webhooks/endpoints/we_nope/test', body: {} });
      await walk.expect(202, 'sendSampleEvent', { body: { type: 'kyc.revoked' } });
      await walk.expect(202, 'replayDeadDeliveries', { path: `/v1/webhooks/endpoints/${ep}/replay-dead` });
      await walk.expect(404, 'replayDeadDeliveries', { path: '/v1/webhooks/endpoints/we_nope/replay-dead' });
      await deliveries.runOnce();
      const listed = (await walk.expect(200, 'listWebhookDeliveries', { path: '/v1/webhooks/deliveries?limit=5' })).body.data;
      await walk.expect(422, 'listWebhookDeliveries', { path: '/v1/webhooks/deliveries?status=nope' });
      const delivery = listed[0].id as string;
      await walk.expect(200, 'getWebhookDelivery', { path: `/v1/webhooks/deliveries/${delivery}` });
      await walk.expect(404, 'getWebhookDelivery', { path: '/v1/webhooks/deliveries/del_nope' });
      await walk.send('replayWebhookDelivery', { path: `/v1/webhooks/deliveries/${delivery}/replay` });
      await walk.expect(404, 'replayWebhookDelivery', { path: '/v1/webhooks/deliveries/del_nope/replay' });
      const events = (await walk.expect(200, 'listEvents', { path: '/v1/events?limit=3' })).body.data;
      await walk.expect(422, 'listEvents', { path: '/v1/events?type=nope' });
      await walk.expect(200, 'getEvent', { path: `/v1/events/${events[0].id}` });
      await walk.expect(404, 'getEvent', { path: '/v1/events/evt_nope' });
      await walk.expect(202, 'resendEvent', { path: `/v1/events/${events[0].id}/resend`, body: { endpoint_id: ep } });
      await walk.expect(404, 'resendEvent', { path: '/v1/events/evt_nope/resend', body: {} });
      await walk.expect(200, 'streamEvents');
      await walk.expect(422, 'streamEvents', { path: '/v1/events/stream?zz=1' });
      const gone = (await walk.expect(201, 'createWebhookEndpoint', { body: { url: 'http://127.0.0.1:9/gone', events: ['kyc.revoked'] } }))
        .body;
      await walk.expect(204, 'deleteWebhookEndpoint', { path: `/v1/webhooks/endpoints/${gone.id}` });
      await walk.expect(404, 'deleteWebhookEndpoint', { path: `/v1/webhooks/endpoints/${gone.id}` });

      // Then what every operation of its kind can answer, on each operation.
      const paths: Record<string, string> = {};
      for (const op of walk.operations)
        paths[op.operationId] = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'date' ? '2026-11-23' : 'x_nope'));
      const onlyScopeToken = async (scope: string) => {
        if (!tokens.has(`only ${scope}`)) tokens.set(`only ${scope}`, (await issue([scope])).token);
        return tokens.get(`only ${scope}`)!;
      };
      await walk.sharedErrors(paths, otherScopeToken, onlyScopeToken);

      // The receiver never answers: after the last attempt (+24 h) its deliveries are dead letters.
      for (const offset of [1, 31, 6 * 60, 40 * 60, 3 * 3600, 7 * 3600, 25 * 3600]) {
        c.clock.set(new Date(Date.parse('2026-11-23T10:01:00.000Z') + offset * 1000).toISOString());
        for (let pass = 0; pass < 2; pass++) await deliveries.runOnce();
      }
      const own = await walk.expect(200, 'createAccessToken', {
        token: null,
        body: { grant_type: 'client_credentials', client_id: c.api.clientId, client_secret: c.api.clientSecret },
      });
      walk.token = own.body.access_token;
      const dead = (await walk.expect(200, 'listWebhookDeliveries', { path: '/v1/webhooks/deliveries?status=dead' })).body.data;
      await walk.expect(202, 'replayWebhookDelivery', { path: `/v1/webhooks/deliveries/${dead[0]?.id}/replay` });

      // Audit: the day's snapshot once the day is over.
      await new SnapshotWorker(c.runtime.services.audit, c.clock, c.runtime.app.log).runOnce();
      await walk.expect(200, 'getAuditSnapshot', { path: '/v1/audit/snapshots/2026-11-23' });
      await walk.expect(404, 'getAuditSnapshot', { path: '/v1/audit/snapshots/2026-11-22' });
      await walk.expect(422, 'getAuditSnapshot', { path: '/v1/audit/snapshots/2026-13-45' });
      await walk.expect(200, 'getSnapshotProof', { path: `/v1/audit/snapshots/2026-11-23/proofs/${filled.id}` });
      await walk.expect(404, 'getSnapshotProof', { path: '/v1/audit/snapshots/2026-11-23/proofs/ord_nope' });
      await walk.expect(422, 'getSnapshotProof', { path: '/v1/audit/snapshots/nope/proofs/ord_nope' });
      await walk.expect(200, 'listFixSessions', { token: (await issue(['operator:read'])).token });

      // The client's own secret last: the old one keeps working 24 hours.
      const narrowed = await walk.expect(200, 'createAccessToken', {
        token: null,
        body: { grant_type: 'client_credentials', client_id: c.api.clientId, client_secret: c.api.clientSecret, scope: 'kyc:read' },
      });
      await walk.expect(403, 'rotateClientSecret', { token: narrowed.body.access_token, body: {} });
      await walk.expect(200, 'rotateClientSecret', { body: { expire_previous: 'in_24_hours' } });

      assert.deepEqual(walk.mismatches, [], walk.mismatches.join('\n'));
      assert.deepEqual(walk.problems, [], walk.problems.join('\n'));
      assert.deepEqual(walk.unexercised(EXEMPT), []);
    });

    test('every operation under the rate limit answers 429 as the document says', async (t) => {
      const e = testEnvironment(t, database, { CAURI_WORKERS: 'none', CAURI_RATE_LIMIT_SANDBOX: '1' });
      const runtime = await startRuntimeIn(t, e);
      const base = await listen(runtime);
      const client = await runtime.services.clients.create('walk', ['kyc:read', 'operator:read' as Scope]);
      const document = runtime.app.swagger() as unknown as Record<string, any>;
      const res = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }),
      });
      const walk = new OperationWalk(base, document, ((await res.json()) as { access_token: string }).access_token);
      // One request per window: the token exchange took this address's, the first call takes the client's.
      for (const op of walk.operations) {
        const path = op.path.replace(/\{(\w+)\}/g, 'x');
        for (let i = 0; i < 2; i++) {
          const sent = await walk.send(op.operationId, { path });
          if (sent.status !== 429) continue;
          assert.match(sent.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
          break;
        }
      }
      const limited = walk.operations.filter((op) => op.statuses.includes('429'));
      for (const op of limited) assert.ok(walk.seen.get(op.operationId)?.has('429'), `${op.operationId} answered 429`);
      assert.deepEqual(walk.problems, [], walk.problems.join('\n'));
    });
  });
}

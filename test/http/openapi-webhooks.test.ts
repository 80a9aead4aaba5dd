import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient, KYC2_REQUEST } from '../support/api.js';
import { EVENT_TYPES } from '../../src/events/event.types.js';

// The document's `webhooks` section describes what a delivery sends: each event type's body and the
// headers of every attempt. Checked here against the deliveries the service really makes.

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: Json;
}
interface WebhookOperation {
  operationId: string;
  parameters: Parameter[];
  requestBody: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
}

const DOCUMENT_ID = 'https://openapi.invalid/document.json';

for (const database of DATABASES) {
  describe(`OpenAPI webhooks on ${database.name}`, () => {
    test("every event type is described, and each real delivery's body and headers match its entry", async (t) => {
      const received: { headers: IncomingHttpHeaders; body: string }[] = [];
      const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
      const port = (receiver.address() as { port: number }).port;

      const runtime = await startRuntime(t, database, { CAURI_WORKERS: 'all' });
      const base = await listen(runtime);
      const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Json & {
        webhooks: Record<string, { post: WebhookOperation }>;
      };
      assert.deepEqual(Object.keys(document.webhooks), [...EVENT_TYPES], 'one entry per event type, in their order');
      const operationIds = Object.values(document.webhooks).map((w) => w.post.operationId);
      assert.equal(new Set(operationIds).size, EVENT_TYPES.length, 'distinct operation ids');

      const api = await apiClient(runtime, base);
      const endpoint = (await (
        await api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${port}/hooks`, events: [...EVENT_TYPES] })
      ).json()) as Json;
      // Real events for the attestation types, and the service's sample of every type.
      const attestation = (await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as Json;
      assert.equal((await api.post(`/v1/kyc/attestations/${attestation.id}/revoke`, { reason: 'compromised' })).status, 200);
      for (const type of EVENT_TYPES) assert.equal((await api.post(`/v1/webhooks/endpoints/${endpoint.id}/test`, { type })).status, 202);
      const expected = EVENT_TYPES.length + 2;
      const deadline = Date.now() + 20_000;
      while (received.length < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(received.length, expected, 'every event delivered');

      const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
      ajv.addSchema(document, DOCUMENT_ID);
      const bodySchema = (type: string) =>
        ajv.compile({ $ref: `${DOCUMENT_ID}#/webhooks/${type}/post/requestBody/content/application~1json/schema` });
      const seen = new Set<string>();
      for (const delivery of received) {
        const event = JSON.parse(delivery.body) as Json & { type: string };
        seen.add(event.type);
        const operation = document.webhooks[event.type]!.post;
        const validate = bodySchema(event.type);
        assert.ok(validate(event), `${event.type}: ${ajv.errorsText(validate.errors)}`);
        for (const parameter of operation.parameters) {
          assert.equal(parameter.in, 'header');
          const value = delivery.headers[parameter.name.toLowerCase()];
          if (value === undefined) {
            assert.equal(parameter.required, false, `${event.type}: required header ${parameter.name} missing`);
            continue;
          }
          assert.ok(ajv.validate(parameter.schema, value), `${event.type}: header ${parameter.name} ${String(value)}`);
        }
      }
      assert.deepEqual([...seen].sort(), [...EVENT_TYPES].sort());

      // Each entry is its type's own: an order.created body is not an order.executed one, and an
      // event without its data does not pass.
      const created = JSON.parse(received.find((d) => d.body.includes('"order.created"'))!.body) as Json;
      assert.equal(bodySchema('order.executed')({ ...created, type: 'order.executed' }), false);
      assert.equal(bodySchema('order.created')({ ...created, data: {} }), false);
      assert.equal(bodySchema('kyc.revoked')({ ...created, type: 'kyc.revoked' }), false);
    });
  });
}

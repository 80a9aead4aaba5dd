import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { apiClient } from '../support/api.js';

// The delivery headers carry the service name (CAURI_SERVICE_NAME); the document that describes
// them must name the same headers, or a handler generated from it looks for headers never sent.

interface Parameter {
  name: string;
  required: boolean;
  description: string;
}

test('with another service name, the webhooks section names the headers the deliveries carry', async (t) => {
  const received: IncomingHttpHeaders[] = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const port = (receiver.address() as { port: number }).port;

  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_SERVICE_NAME: 'my-broker', CAURI_WORKERS: 'all' });
  const base = await listen(runtime);
  const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as {
    webhooks: Record<string, { post: { parameters: Parameter[] } }>;
  };
  const parameters = document.webhooks['webhook.test']!.post.parameters;
  const names = parameters.map((p) => p.name);
  assert.ok(names.includes('X-My-Broker-Signature'), names.join(', '));
  assert.ok(names.includes('X-My-Broker-Idempotency-Key'), names.join(', '));
  assert.equal(
    names.some((n) => n.startsWith('X-Cauri-')),
    false,
  );

  const api = await apiClient(runtime, base);
  const endpoint = (await (
    await api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${port}/hooks`, events: ['webhook.test'] })
  ).json()) as {
    id: string;
  };
  assert.equal((await api.post(`/v1/webhooks/endpoints/${endpoint.id}/test`, {})).status, 202);
  const deadline = Date.now() + 10_000;
  while (received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  const headers = received[0];
  assert.ok(headers, 'the test event was delivered');
  for (const parameter of parameters.filter((p) => p.required)) {
    assert.ok(headers[parameter.name.toLowerCase()] !== undefined, `required header ${parameter.name} sent`);
  }
  const agent = parameters.find((p) => p.name === 'User-Agent')!;
  assert.ok(agent.description.includes(String(headers['user-agent'])), `${agent.description} / ${headers['user-agent']}`);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { parseConfig } from '../../src/config/config.js';
import { createHttpApp } from '../../src/http/app.js';
import { Metrics } from '../../src/http/metrics.js';
import { ErrorBody } from '../../src/http/schemas.js';

// The HTTP edge on its own, with one real route that has a strict body schema: what every JSON POST
// of the API goes through before its handler runs.
async function edge(t: import('node:test').TestContext) {
  const config = parseConfig({ LOG_LEVEL: 'silent' });
  const app = await createHttpApp(
    config,
    new Metrics({
      poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
      commitStats: () => ({ batches: 0, units: 0 }),
      pendingEvents: async () => 0,
    }),
  );
  let calls = 0;
  app.post(
    '/v1/things',
    {
      schema: {
        body: Type.Object(
          {
            qty: Type.Integer({ minimum: 1 }),
            side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
            tags: Type.Optional(Type.Array(Type.String())),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean() }), 422: ErrorBody },
      },
    },
    async () => {
      calls++;
      return { ok: true, secret: 'never serialised' };
    },
  );
  app.get('/v1/boom', async () => {
    throw new Error('SELECT * FROM secrets -- internal detail');
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { base, calls: () => calls };
}

const post = (base: string, body: string, type = 'application/json') =>
  fetch(`${base}/v1/things`, { method: 'POST', headers: { 'content-type': type }, body });

test('responses are serialised by their schema: no undeclared field leaks', async (t) => {
  const { base } = await edge(t);
  const res = await post(base, '{"qty":1,"side":"buy"}');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { ok: true });
});

test('each malformed request gets 4xx with the error body, and the handler never runs', async (t) => {
  const { base, calls } = await edge(t);
  const cases: [string, string, number, string, { field: string; rule: string; value?: unknown }[]][] = [
    ['malformed JSON', '{"qty":', 422, 'validation_error', [{ field: 'body', rule: 'json' }]],
    ['empty body', '', 422, 'validation_error', [{ field: 'body', rule: 'required' }]],
    ['not an object', '[1,2]', 422, 'validation_error', [{ field: 'body', rule: 'type' }]],
    ['qty 0', '{"qty":0,"side":"buy"}', 422, 'validation_error', [{ field: 'qty', rule: 'minimum', value: 0 }]],
    ['qty 1.5', '{"qty":1.5,"side":"buy"}', 422, 'validation_error', [{ field: 'qty', rule: 'type', value: 1.5 }]],
    ['qty "10" is not coerced', '{"qty":"10","side":"buy"}', 422, 'validation_error', [{ field: 'qty', rule: 'type', value: '10' }]],
    ['missing member', '{"side":"buy"}', 422, 'validation_error', [{ field: 'qty', rule: 'required', value: null }]],
    [
      'unknown member',
      '{"qty":1,"side":"buy","hold":true}',
      422,
      'validation_error',
      [{ field: 'hold', rule: 'additionalProperties', value: true }],
    ],
    ['nested path', '{"qty":1,"side":"buy","tags":["a",2]}', 422, 'validation_error', [{ field: 'tags.1', rule: 'type', value: 2 }]],
    ['prototype poisoning', '{"qty":1,"side":"buy","__proto__":{"x":1}}', 422, 'validation_error', [{ field: 'body', rule: 'json' }]],
    [
      '5,000 nested arrays',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      422,
      'validation_error',
      [{ field: 'body', rule: 'maxDepth', value: 5000 }],
    ],
    [
      '5,000 nested objects in a member',
      `{"qty":1,"side":"buy","tags":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
      422,
      'validation_error',
      [{ field: 'body', rule: 'maxDepth', value: 5001 }],
    ],
    [
      'one level over the limit',
      `{"qty":1,"side":"buy","tags":${'['.repeat(32)}${']'.repeat(32)}}`,
      422,
      'validation_error',
      [{ field: 'body', rule: 'maxDepth', value: 33 }],
    ],
    [
      'at the limit, the schema decides',
      `{"qty":1,"side":"buy","tags":${'['.repeat(31)}${']'.repeat(31)}}`,
      422,
      'validation_error',
      [{ field: 'tags.0', rule: 'type' }],
    ],
  ];
  for (const [name, body, status, code, details] of cases) {
    const res = await post(base, body);
    const json = (await res.json()) as any;
    assert.equal(res.status, status, name);
    assert.equal(json.code, code, name);
    assert.equal(json.request_id, res.headers.get('x-request-id'), name);
    for (const expected of details) {
      assert.ok(
        json.details.some(
          (d: any) =>
            d.field === expected.field &&
            d.rule === expected.rule &&
            (!('value' in expected) || JSON.stringify(d.value) === JSON.stringify(expected.value)),
        ),
        `${name}: ${JSON.stringify(json.details)}`,
      );
    }
  }
  const noBody = await fetch(`${base}/v1/things`, { method: 'POST' });
  assert.equal(noBody.status, 422);
  assert.deepEqual(
    ((await noBody.json()) as any).details.map((d: any) => [d.field, d.rule]),
    [['body', 'required']],
    'no body at all, as an empty one',
  );
  const side = (await (await post(base, '{"qty":1,"side":"hold"}')).json()) as any;
  assert.ok(side.details.some((d: any) => d.field === 'side' && d.value === 'hold'));
  assert.equal(calls(), 0);
});

test('a body over 64 KiB is 413 and a wrong content type is 415', async (t) => {
  const { base, calls } = await edge(t);
  const big = await post(base, JSON.stringify({ qty: 1, side: 'buy', tags: ['x'.repeat(70 * 1024)] }));
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as any).code, 'payload_too_large');
  for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
    const res = await post(base, 'qty=1', type);
    assert.equal(res.status, 415, type);
    assert.equal(((await res.json()) as any).code, 'unsupported_media_type');
  }
  assert.equal(calls(), 0);
});

test('a 500 hides its internals', async (t) => {
  const { base } = await edge(t);
  const res = await fetch(`${base}/v1/boom`);
  assert.equal(res.status, 500);
  const text = await res.text();
  assert.doesNotMatch(text, /SELECT|secrets|stack|at /);
  const body = JSON.parse(text);
  assert.equal(body.code, 'internal_error');
  assert.equal(body.request_id, res.headers.get('x-request-id'));
});

test('authentication refuses to be installed after an API route: that route would have no check', async (t) => {
  const { installAuthentication } = await import('../../src/auth/authenticate.js');
  const config = parseConfig({ LOG_LEVEL: 'silent' });
  const app = await createHttpApp(
    config,
    new Metrics({
      poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
      commitStats: () => ({ batches: 0, units: 0 }),
      pendingEvents: async () => 0,
    }),
  );
  t.after(() => app.close());
  app.get('/v1/early', async () => ({ ok: true }));
  await app.after();
  // The guard runs before any dependency is used.
  assert.throws(() => installAuthentication(app, {} as Parameters<typeof installAuthentication>[1]), /before any API route is registered/);
});

test('a request to no route is 404 not_found whatever its body: malformed, too large, not UTF-8 or too deep', async (t) => {
  const { base, calls } = await edge(t);
  const bodies: [string, string | Buffer][] = [
    ['malformed JSON', '{"qty":'],
    ['over 64 KiB', JSON.stringify({ tags: ['x'.repeat(70 * 1024)] })],
    ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ['too deep', `${'['.repeat(40)}${']'.repeat(40)}`],
    ['prototype poisoning', '{"__proto__":{"x":1}}'],
    ['valid JSON', '{"qty":1}'],
  ];
  for (const [name, body] of bodies) {
    for (const path of ['/v1/nothing/here', '/elsewhere']) {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const json = (await res.json()) as any;
      assert.equal(res.status, 404, `${name} ${path}`);
      assert.equal(json.code, 'not_found', `${name} ${path}`);
      assert.equal(json.details, undefined, `${name} ${path}`);
      assert.equal(json.request_id, res.headers.get('x-request-id'));
    }
  }
  // A known path with another method is no route either.
  const put = await fetch(`${base}/v1/things`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{' });
  assert.equal(put.status, 404);
  assert.equal(((await put.json()) as any).code, 'not_found');
  assert.equal(calls(), 0);
});

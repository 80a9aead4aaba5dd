import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Type } from '@sinclair/typebox';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';

// The harness checks every response of every test against the published document; this test shows
// that the check catches what it is there to catch, on a route of its own added to a runtime.
test('responses that break the published document are reported, naming the operation', async (t) => {
  const e = testEnvironment(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const runtime = await startRuntimeIn(t, {
    ...e,
    options: {
      ...e.options,
      extendApp: (app) => {
        app.get(
          '/v1/conformance-probe',
          {
            schema: {
              operationId: 'probeConformance',
              summary: 'A probe',
              querystring: Type.Object({ answer: Type.String() }),
              response: { 200: Type.Object({ n: Type.Integer() }, { headers: { 'x-probe': Type.Integer() } }) },
            },
          },
          async (request, reply) => {
            const { answer } = request.query as { answer: string };
            // A status the route's schema does not declare (its types allow only 200).
            if (answer === 'teapot')
              return reply
                .code(418 as 200)
                .type('application/json')
                .send('{"n":1}');
            if (answer === 'string') return reply.type('application/json').send('{"n":"one"}');
            if (answer === 'header') return reply.header('x-probe', 'many').type('application/json').send('{"n":1}');
            if (answer === 'text') return reply.type('text/plain').send('one');
            return reply.header('x-probe', '7').type('application/json').send('{"n":1}');
          },
        );
      },
    },
  });
  const base = await listen(runtime);
  const probe = (answer: string) => fetch(`${base}/v1/conformance-probe?answer=${answer}`).then((res) => res.text());

  await probe('good');
  // A 422 of the route's own validation (a missing parameter) is documented by the shared responses.
  await fetch(`${base}/v1/conformance-probe`).then((res) => res.text());
  assert.deepEqual(e.responseProblems, []);

  await probe('teapot');
  await probe('string');
  await probe('header');
  await probe('text');
  const problems = e.responseProblems.splice(0);
  assert.equal(problems.length, 4, problems.join('\n'));
  assert.match(problems[0]!, /^GET \/v1\/conformance-probe \(probeConformance\) answered 418, a status the document does not list/);
  assert.match(problems[1]!, /\(probeConformance\) 200: the body breaks the published schema: \/n must be integer/);
  assert.match(problems[2]!, /\(probeConformance\) 200: header X-Probe: "many" must be integer/);
  assert.match(problems[3]!, /\(probeConformance\) 200: Content-Type text\/plain where the document lists application\/json/);

  // A real operation: an error body is checked too (the token endpoint's 401 carries the OAuth members).
  const refused = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: 'cli_unknown', client_secret: 'sk_test_wrong' }),
  });
  assert.equal(refused.status, 401);
  await refused.text();
  assert.deepEqual(e.responseProblems, []);
});

// The failure itself: a test whose response breaks the document fails, naming the operation, once
// its own clean-up has run (a failing hook skips the hooks after it).
test('a test with such a response fails after its own clean-up', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-conformance-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const harness = new URL('../support/harness.js', import.meta.url).href;
  const file = join(dir, 'probe.test.mjs');
  writeFileSync(
    file,
    `import { test } from 'node:test';
import { DATABASES, listen, startRuntime } from ${JSON.stringify(harness)};
test('a response outside the document', async (t) => {
  const extendApp = (app) => {
    app.get('/v1/conformance-probe', { schema: { operationId: 'probeConformance', summary: 'A probe', response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } } } },
      async (_request, reply) => reply.type('application/json').send('{"n":"one"}'));
  };
  const runtime = await startRuntime(t, DATABASES[0], { CAURI_WORKERS: 'none', CAURI_SEED: 'false' }, { extendApp });
  const base = await listen(runtime);
  await (await fetch(base + '/v1/conformance-probe')).text();
  t.after(() => console.log('own clean-up ran'));
});
`,
  );
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=spec', file], { env, timeout: 60_000 }).then(
    (ok) => ({ code: 0, output: ok.stdout + ok.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
  );
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, /own clean-up ran/);
  assert.match(run.output, /1 response\(s\) of this test break the published OpenAPI document/);
  assert.match(
    run.output,
    /GET \/v1\/conformance-probe \(probeConformance\) 200: the body breaks the published schema: \/n must be integer/,
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, listen, startRuntime } from '../support/harness.js';

// With another service name (CAURI_SERVICE_NAME), the OpenAPI document names what that deployment
// serves and sends: its key document's path and its webhook headers, in the paths and in every
// description, so that nobody reading it looks for a path that answers 404 or a header never sent.

/** Every string of a JSON value, with where it is. */
function strings(value: unknown, at = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${at}/${i}`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => strings(v, `${at}/${k}`));
  return [];
}

for (const database of DATABASES) {
  test(`with another service name, the OpenAPI document names none of the default's paths or headers, on ${database.name}`, async (t) => {
    const runtime = await startRuntime(t, database, { CAURI_SERVICE_NAME: 'my-broker', CAURI_WORKERS: 'none' });
    const base = await listen(runtime);
    const document = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(document.paths['/.well-known/my-broker'], 'the key document under the service name');
    assert.equal(document.paths['/.well-known/cauri'], undefined);

    const defaults = /\/\.well-known\/cauri\b|X-Cauri-|Cauri-Webhooks/;
    const stale = strings(document).filter(([, text]) => defaults.test(text));
    assert.deepEqual(stale, [], 'texts that name the default brand instead of my-broker');

    // Every well-known path a text names is one the deployment answers.
    const named = new Set(strings(document).flatMap(([, text]) => text.match(/\/\.well-known\/[A-Za-z0-9._-]+/g) ?? []));
    for (const path of named) assert.equal((await fetch(`${base}${path}`)).status, 200, `${path}, named in the document`);
  });
}

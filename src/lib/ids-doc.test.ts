import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ID_PREFIXES } from './ids.js';

// docs/concepts.md tells integrators which prefix names which kind of resource.
const doc = readFileSync(new URL('../../../docs/concepts.md', import.meta.url), 'utf8');

test('the table of identifier prefixes in docs/concepts.md lists every prefix the service issues', () => {
  const section = doc.slice(doc.indexOf('## Identifiers'), doc.indexOf('## Time and money'));
  const documented = [...section.matchAll(/^\| `([a-z]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.values(ID_PREFIXES).sort());
});

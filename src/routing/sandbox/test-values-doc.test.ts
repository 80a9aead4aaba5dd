import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SANDBOX_INSTRUMENTS, SANDBOX_PARTNERS, sandboxTariffRow } from '../../partners/sandbox-seed.js';
import { SANDBOX_TEST_VALUES } from './test-values.js';

// docs/sandbox.md is what integrators read; it must list every test value, partner (and its commission) and instrument.
const doc = readFileSync(new URL('../../../../docs/sandbox.md', import.meta.url), 'utf8');

test('docs/sandbox.md lists every test value, partner and instrument of the sandbox', () => {
  for (const v of SANDBOX_TEST_VALUES)
    assert.ok(doc.includes(`| \`${v.trigger}\` | \`${v.value}\` | ${v.outcome} |`), `${v.trigger} ${v.value}`);
  for (const p of SANDBOX_PARTNERS) assert.ok(doc.includes(`\`${p.id}\` | ${p.name}`), p.name);
  for (const p of SANDBOX_PARTNERS) assert.ok(doc.includes(sandboxTariffRow(p)), `${p.name}'s commission`);
  for (const i of SANDBOX_INSTRUMENTS) assert.ok(doc.includes(`\`${i.code}\` | ${i.class}`), i.code);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REVOCATION_REASONS } from '../../src/kyc/kyc.schemas.js';
import { VERIFICATION_TYPES } from '../../src/kyc/levels.js';
import { PHASES } from '../../src/markets/calendar.js';
import { CANCEL_REASONS, FAILURE_REASONS, PENDING_REQUESTS, REQUEST_REFUSALS, TIME_IN_FORCE } from '../../src/orders/core/lifecycle.js';
import { SETTLEMENT_STATUSES } from '../../src/orders/core/settlement.js';
import { ORDER_STATUSES } from '../../src/orders/core/state-machine.js';
import { FEE_TYPES } from '../../src/partners/core/fees.js';
import { DELIVERY_STATUSES } from '../../src/webhooks/webhook.schemas.js';

// Compiled to dist/test/browser/: the repository root is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function load(language: 'en' | 'fr'): Promise<Record<string, string>> {
  const module = (await import(new URL(`../../../dashboard/dist/i18n/${language}.js`, import.meta.url).href)) as Record<
    string,
    Record<string, string>
  >;
  const catalogue = module[language];
  assert.ok(catalogue !== undefined, language);
  return catalogue;
}

const placeholders = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();

test("the dashboard's catalogues: the same keys in English and French, no empty message, the same values in each", async () => {
  const en = await load('en');
  const fr = await load('fr');
  assert.deepEqual(Object.keys(fr).sort(), Object.keys(en).sort(), 'a key missing in one language');
  for (const [key, english] of Object.entries(en)) {
    const french = fr[key] ?? '';
    assert.notEqual(english.trim(), '', `en ${key}`);
    assert.notEqual(french.trim(), '', `fr ${key}`);
    assert.deepEqual(placeholders(french), placeholders(english), `the values of ${key}`);
  }
  // Plural messages have every form Intl.PluralRules picks for the two languages.
  const bases = new Set(
    Object.keys(en)
      .filter((k) => k.endsWith('.one'))
      .map((k) => k.slice(0, -'.one'.length)),
  );
  assert.ok(bases.size > 0);
  for (const base of bases) for (const form of ['one', 'many', 'other']) assert.ok(`${base}.${form}` in en, `${base}.${form}`);
});

test("every message the dashboard's source asks for by name is in the catalogues", async () => {
  const en = await load('en');
  const dir = join(ROOT, 'dashboard/src');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.startsWith('i18n'));
  const asked = new Set<string>();
  for (const file of files) {
    const source = readFileSync(join(dir, file), 'utf8');
    for (const m of source.matchAll(/\bt\('([\w.]+)'/g)) asked.add(m[1] ?? '');
    for (const m of source.matchAll(/\btn\('([\w.]+)'/g)) asked.add(`${m[1] ?? ''}.other`);
  }
  assert.ok(asked.size > 100, `${asked.size} messages found in the source`);
  for (const key of asked) assert.ok(key in en, key);
});

test('every value of the API that the dashboard shows in words has its message in English and in French', async () => {
  const en = await load('en');
  const fr = await load('fr');
  // The key each value is looked up under (tKnown): without one, the page would show the raw value, in English.
  const shown: Record<string, readonly string[]> = {
    status: [
      ...ORDER_STATUSES,
      ...PENDING_REQUESTS,
      ...SETTLEMENT_STATUSES,
      ...DELIVERY_STATUSES,
      ...PHASES,
      'closed',
      'active',
      'revoked',
      'expired',
      'cancel',
      'amend',
    ],
    reason: [...FAILURE_REASONS, ...CANCEL_REASONS, ...REQUEST_REFUSALS, ...REVOCATION_REASONS],
    tif: TIME_IN_FORCE,
    fee: FEE_TYPES,
    verification: VERIFICATION_TYPES,
    side: ['buy', 'sell'],
  };
  const missing: string[] = [];
  for (const [prefix, values] of Object.entries(shown))
    for (const value of values)
      for (const [language, catalogue] of [
        ['en', en],
        ['fr', fr],
      ] as const)
        if (!(`${prefix}.${value}` in catalogue)) missing.push(`${language} ${prefix}.${value}`);
  assert.deepEqual(missing, []);
});

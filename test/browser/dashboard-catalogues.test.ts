import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readShippedFees } from '../../src/partners/fee-schedule.service.js';
import { runCli } from '../support/process.js';

type Json = Record<string, any>;

function deployment(t: TestContext): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-fees-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SQLITE_SYNCHRONOUS: 'NORMAL' } };
}

async function json(args: string[], env: Record<string, string>): Promise<any> {
  const { code, stdout, stderr } = await runCli([...args, '--json'], env);
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout) as unknown;
}

const gse = (readShippedFees().find((f) => f.file === 'GSE.json')?.content as Json[])[0] as Json;

test('cauri fees: list the shipped and sandbox schedules, refuse a bad file whole, import a new version', {
  timeout: 180_000,
}, async (t) => {
  const { dir, env } = deployment(t);
  const listed = (await json(['fees', 'list'], env)) as Json[];
  assert.deepEqual(
    listed.filter((r) => r.scope === 'exchange').map((r) => `${r.id} ${r.effective_from} ${r.origin}`),
    ['BRVM 2025-01-01 shipped', 'BVMAC 2024-10-02 shipped', 'GSE 2025-01-01 shipped'],
  );
  assert.equal(listed.filter((r) => r.scope === 'partner').length, 11, 'one version for each sandbox partner');

  const next = { ...gse, effective_from: '2027-01-01', source: 'SEC Ghana, Guidelines on Market Levies for 2027' };
  const bad = {
    ...gse,
    effective_from: '2027-01-01',
    components: [...gse.components, { type: 'exchange', name: 'twice', rate_bps: 1, classes: ['equities'] }],
  };
  writeFileSync(join(dir, 'bad.json'), JSON.stringify([next, bad]));
  const refused = await runCli(['fees', 'import', join(dir, 'bad.json')], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stdout, /^entry 1: rejected: components\.8\.type unique \(components\.0 already charges exchange on equities\)$/m);
  assert.doesNotMatch(refused.stdout, /^entry 0/m);
  assert.match(refused.stdout, /Nothing was written/);
  assert.deepEqual(await json(['fees', 'list'], env), listed);

  writeFileSync(join(dir, 'good.json'), JSON.stringify(next));
  const imported = await runCli(['fees', 'import', join(dir, 'good.json')], env);
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, /^entry 0: created GSE 2027-01-01$/m);
  const gseVersions = (await json(['fees', 'list', '--owner', 'gse'], env)) as Json[];
  assert.deepEqual(
    gseVersions.map((r) => `${r.effective_from} ${r.origin}`),
    ['2025-01-01 shipped', '2027-01-01 import'],
  );
  assert.equal(gseVersions[1]?.content.source, next.source);
  const text = await runCli(['fees', 'list', '--scope', 'exchange'], env);
  assert.match(
    text.stdout,
    /^exchange\s+GSE\s+2027-01-01\s+import\s+exchange 35 bps \(equities, junior_board, reit, opcvm\), half_up\/1: Ghana Stock Exchange levy$/m,
  );
  assert.match(text.stdout, /^\s+tax 1800 bps on commission, half_up\/100: TVA 18 % on the SGI's commission$/m);
  assert.deepEqual((await json(['migrate'], env)).fees, [], 'the shipped versions are there; the import is left alone');
});

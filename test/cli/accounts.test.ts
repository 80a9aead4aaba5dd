import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountService } from '../../src/accounts/account.service.js';
import { openDatabase } from '../../src/app.js';
import { parseConfig } from '../../src/config/config.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { ClientId } from '../../src/lib/ids.js';
import { runCli } from '../support/process.js';

test("partners list shows which partners require the investor's account and their default; accounts list shows a client's registrations", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-accounts-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { CAURI_DATA_DIR: dir, CAURI_MASTER_KEY: randomBytes(32).toString('hex'), CAURI_SEED: 'false' };
  const file = join(dir, 'partners.json');
  const fix = { host: 'fix.sgi.example', port: 9876, sender_comp_id: 'CAURI', target_comp_id: 'SGI1' };
  writeFileSync(
    file,
    JSON.stringify([
      { name: 'A Comptes Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], checks: { accounts: true } },
      { name: 'B Libre Titres', jurisdiction: 'UEMOA', capabilities: ['equities'] },
      { name: 'C Fix Omnibus', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix: { ...fix, account: 'OMNIBUS-1' } },
    ]),
  );
  const imported = await runCli(['partners', 'import', file, '--json'], env);
  assert.equal(imported.code, 0, imported.stderr);
  const [required = '', free = '', omnibus = ''] = (JSON.parse(imported.stdout) as { applied: { id: string }[] }).applied.map((a) => a.id);

  const listed = JSON.parse((await runCli(['partners', 'list', '--json'], env)).stdout) as Record<string, unknown>[];
  const byName = new Map(listed.map((p) => [p.name, [p.checks, p.requires_account, p.default_account]]));
  assert.deepEqual(byName.get('A Comptes Titres'), [{ accounts: true, holdings: false }, true, null]);
  assert.deepEqual(byName.get('B Libre Titres'), [{ accounts: false, holdings: false }, false, null]);
  assert.deepEqual(byName.get('C Fix Omnibus'), [{ accounts: false, holdings: false }, false, 'OMNIBUS-1']);
  const table = (await runCli(['partners', 'list'], env)).stdout;
  assert.match(table.split('\n')[0] ?? '', /requires_account\s+default_account$/);

  const storage = await openDatabase(parseConfig(env));
  try {
    const accounts = new AccountService(new ManualClock('2026-11-23T10:00:00.000Z'));
    const put = (client: string, subject: string, partner: string, number: string) =>
      storage.transact((trx) => accounts.put(trx, client as ClientId, { subject_id: subject, partner_id: partner }, number));
    await put('cli_01kdvdna00e5fsxhz2kkrzpb8n', 'inv-2', required, 'CTO-2');
    await put('cli_01kdvdna00e5fsxhz2kkrzpb8n', 'inv-1', omnibus, 'FIX-1');
    await put('cli_01kdvdna00e5fsxhz2kkrzpb8n', 'inv-1', free, 'LIB-1');
    await put('cli_01kdvdna00e5fsxhz2kkrzpb8p', 'inv-1', free, 'OTHER-CLIENT');
  } finally {
    await storage.close();
  }

  const all = JSON.parse(
    (await runCli(['accounts', 'list', '--client', 'cli_01kdvdna00e5fsxhz2kkrzpb8n', '--json'], env)).stdout,
  ) as Record<string, unknown>[];
  const inv1 = [
    [free, 'LIB-1'],
    [omnibus, 'FIX-1'],
  ].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  assert.deepEqual(
    all.map((a) => [a.subject_id, a.partner_id, a.account_number]),
    [...inv1.map(([partner, number]) => ['inv-1', partner, number]), ['inv-2', required, 'CTO-2']],
    "the client's own, by subject then partner",
  );
  const one = await runCli(
    ['accounts', 'list', '--client', 'cli_01kdvdna00e5fsxhz2kkrzpb8n', '--subject', 'inv-1', '--partner', free],
    env,
  );
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual(
    one.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/).slice(0, 3)),
    [
      ['subject_id', 'partner_id', 'account_number'],
      ['inv-1', free, 'LIB-1'],
    ],
  );
  const bad = await runCli(['accounts', 'list', '--client', 'nobody'], env);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--client must be a client id/);
});

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASES } from '../support/harness.js';
import { KYC3_REQUEST, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';
import { runCli } from '../support/process.js';

const BAOBAB = sandboxPartner('baobab');

function cliEnv(t: TestContext, c: OrderContext): { env: Record<string, string>; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-cli-positions-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    env: { CAURI_CONFIG_DIR: dir, CAURI_API_URL: c.base, CAURI_CLIENT_ID: c.api.clientId, CAURI_CLIENT_SECRET: c.api.clientSecret },
  };
}

test('cauri positions list, declare and statements act on the remote service and print its answers', async (t) => {
  const c = await orderContext(t, DATABASES[0]!);
  const { env, dir } = cliEnv(t, c);
  const att = await c.attestation();
  await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 12 });
  await c.tick(1500);

  const listed = await runCli(['positions', 'list', '--subject', KYC3_REQUEST.subject_id, '--json'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const api = ((await (await c.api.call('GET', `/v1/positions?subject_id=${KYC3_REQUEST.subject_id}`)).json()) as { data: Json[] }).data;
  assert.deepEqual(JSON.parse(listed.stdout), api, 'the positions as the API has them');
  assert.equal(api[0]?.qty, 12);
  const table = await runCli(['positions', 'list', '--subject', KYC3_REQUEST.subject_id], env);
  assert.match(
    table.stdout,
    /^subject_id\s+rcpt_to\s+instrument\s+qty\s+settled_qty\s+average_cost_cents\s+reference_price_cents\s+market_value_cents\s+unrealised_pnl_cents\s+realised_pnl_cents\s+currency$/m,
  );
  assert.match(table.stdout, new RegExp(`^${KYC3_REQUEST.subject_id}\\s+${BAOBAB}\\s+KOLA\\.BRVM\\s+12\\s+0\\s+\\d+`, 'm'));
  assert.equal((await runCli(['positions', 'list', '--subject', 'nobody'], env)).stdout.trim().split('\n').length, 1, 'the header alone');

  const file = join(dir, 'statement.json');
  writeFileSync(
    file,
    JSON.stringify({
      subject_id: KYC3_REQUEST.subject_id,
      rcpt_to: BAOBAB,
      as_of: '2026-11-20',
      holdings: [{ instrument: 'KOLA.BRVM', qty: 30, average_cost_cents: 1_500_000 }],
    }),
  );
  const declared = await runCli(['positions', 'declare', file], env);
  assert.equal(declared.code, 0, declared.stderr);
  assert.match(
    declared.stdout,
    /^stm_[0-9a-z]{26} declared as of 2026-11-20: 1 break\ninstrument\s+statement_qty\s+expected_qty\s+difference_qty\nKOLA\.BRVM\s+30\s+0\s+30\n$/,
  );
  assert.equal(JSON.parse((await runCli(['positions', 'list', '--instrument', 'KOLA.BRVM', '--json'], env)).stdout)[0].qty, 42);

  writeFileSync(
    file,
    JSON.stringify({
      subject_id: KYC3_REQUEST.subject_id,
      rcpt_to: BAOBAB,
      as_of: '2026-11-20',
      holdings: [{ instrument: 'KOLA.BRVM', qty: -1, average_cost_cents: 1 }],
    }),
  );
  const refused = await runCli(['positions', 'declare', file], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^cauri: POST \/v1\/positions\/statements: 422 validation_error: [^\n]*holdings\.0\.qty: minimum[^\n]*\n$/);

  const statements = JSON.parse(
    (await runCli(['positions', 'statements', '--subject', KYC3_REQUEST.subject_id, '--json'], env)).stdout,
  ) as Json[];
  assert.deepEqual(
    statements.map((s) => [s.as_of, s.breaks.length]),
    [['2026-11-20', 1]],
  );
  assert.match(
    (await runCli(['positions', 'statements'], env)).stdout,
    /^id\s+subject_id\s+rcpt_to\s+as_of\s+breaks\s+replaced_by\s+created_at\nstm_\w+\s+qualified-1\s+sgi_\w+\s+2026-11-20\s+1\s+2026-11-23T10:00:\d\d\.\d{3}Z\n$/,
  );
});

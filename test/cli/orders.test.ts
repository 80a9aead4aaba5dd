import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASES } from '../support/harness.js';
import { KOLA_RESTING, orderContext, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';
import { readPdf } from '../support/pdf-text.js';
import { runCli } from '../support/process.js';

const BAOBAB = sandboxPartner('baobab');

/** The environment of an integrator command against `base`, with the context's client credentials. */
function cliEnv(t: TestContext, c: OrderContext, base = c.base): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'cauri-cli-orders-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { CAURI_CONFIG_DIR: dir, CAURI_API_URL: base, CAURI_CLIENT_ID: c.api.clientId, CAURI_CLIENT_SECRET: c.api.clientSecret };
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(['orders', ...args], env);
}

async function json(args: string[], env: Record<string, string>): Promise<any> {
  const run = await cli([...args, '--json'], env);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

test('cauri orders list, get, fills, cancel and amend act on the remote service and print its answers', async (t) => {
  const c = await orderContext(t, DATABASES[0]!);
  const env = cliEnv(t, c);
  const att = await c.attestation();
  const resting = { rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', limit_price_cents: KOLA_RESTING };
  // A millisecond apart, so that newest first is one order (the clock stands still otherwise).
  const market = (await c.order({ rcpt_to: BAOBAB, kyc_attestation_id: att, instrument: 'KOLA.BRVM', side: 'buy', qty: 4 })).body;
  c.clock.advance(1);
  const open = (await c.order({ ...resting, qty: 10 })).body;
  c.clock.advance(1);
  const slow = (await c.order({ ...resting, qty: 202 })).body;
  for (let i = 0; i < 5; i++) await c.tick(1000);
  assert.equal((await c.get(market.id)).status, 'filled');

  const listed = (await json(['list'], env)) as Json[];
  assert.deepEqual(
    listed.map((o) => o.id),
    [slow.id, open.id, market.id],
    'newest first',
  );
  assert.deepEqual(listed[0], await c.get(slow.id), 'the orders as the API has them');
  assert.deepEqual(
    ((await json(['list', '--status', 'filled'], env)) as Json[]).map((o) => o.id),
    [market.id],
  );
  const table = await cli(['list', '--status', 'routed'], env);
  assert.equal(table.code, 0, table.stderr);
  assert.match(
    table.stdout,
    /^id\s+status\s+instrument\s+side\s+qty\s+filled_qty\s+limit_price_cents\s+time_in_force\s+pending_request\s+created_at$/m,
  );
  assert.equal(table.stdout.trim().split('\n').length, 3, 'a header and the two routed orders');
  const badStatus = await cli(['list', '--status', 'teleported'], env);
  assert.deepEqual(
    [badStatus.code, badStatus.stderr],
    [1, `cauri: unknown status "teleported"; statuses are: created, routed, partially_filled, filled, failed, cancelled\n`],
  );

  assert.deepEqual(await json(['get', open.id], env), await c.get(open.id));
  const shown = await cli(['get', open.id], env);
  assert.match(shown.stdout, new RegExp(`^id\\s+${open.id}$`, 'm'));
  assert.match(shown.stdout, /^limit_price_cents\s+1433750$/m);
  const unknown = await cli(['get', 'ord_00000000000000000000000000'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^cauri: GET \/v1\/orders\/ord_0+: 404 not_found: [^\n]+\n$/, 'one line with the code and the message');

  const fills = (await json(['fills', market.id], env)) as Json[];
  assert.deepEqual(fills, ((await (await c.api.call('GET', `/v1/orders/${market.id}/fills`)).json()) as { data: Json[] }).data);
  assert.equal(
    fills.reduce((n, f) => n + (f.qty as number), 0),
    4,
  );
  const fillTable = (await cli(['fills', market.id], env)).stdout;
  assert.match(fillTable, /^id\s+qty\s+price_cents\s+executed_at\s+gross_cents\s+fees\s+net_cents\s+settlement_date\s+settlement_status$/m);
  const fee = (type: string) => (fills[0]?.fees as Json[]).find((f) => f.type === type)?.amount_cents;
  assert.match(
    fillTable,
    new RegExp(
      `commission ${fee('commission')}, exchange ${fee('exchange')}, depository ${fee('depository')}, regulator ${fee('regulator')}, tax ${fee('tax')}\\s+${fills[0]?.net_cents}\\s+\\d{4}-\\d{2}-\\d{2}\\s+pending`,
    ),
  );

  // The contract note: a summary, the JSON as the API has it, the PDF written to a file.
  const note = await json(['contract-note', market.id], env);
  assert.deepEqual(
    { ...note, generated_at: null },
    { ...((await (await c.api.call('GET', `/v1/orders/${market.id}/contract-note`)).json()) as Json), generated_at: null },
  );
  const summary = await cli(['contract-note', market.id], env);
  assert.match(summary.stdout, new RegExp(`^net_cents\\s+${note.net_cents} XOF cents \\(payable\\)$`, 'm'));
  assert.match(summary.stdout, /^partner\s+Baobab Titres \(sandbox\)/m);
  const pdfFile = join(env.CAURI_CONFIG_DIR as string, 'note.pdf');
  const saved = await cli(['contract-note', market.id, '--pdf', pdfFile], env);
  assert.equal(saved.code, 0, saved.stderr);
  assert.equal(readFileSync(pdfFile).subarray(0, 5).toString(), '%PDF-');
  assert.match(saved.stdout, new RegExp(`^${pdfFile}: contract note of ${market.id}, \\d+ bytes\n$`));
  // The PDF's language: the partner's (French for a BRVM partner), or the one --note-lang names.
  const pdfText = async () => (await readPdf(new Uint8Array(readFileSync(pdfFile)))).text.join('\n');
  assert.ok((await pdfText()).includes("Avis d'opéré"), 'French by default for a BRVM partner');
  const inEnglish = await cli(['contract-note', market.id, '--pdf', pdfFile, '--note-lang', 'en'], env);
  assert.equal(inEnglish.code, 0, inEnglish.stderr);
  assert.ok((await pdfText()).includes('Contract note'), '--note-lang en');
  assert.ok(!(await pdfText()).includes("Avis d'opéré"), '--note-lang en');
  const inFrench = await cli(['contract-note', market.id, '--pdf', pdfFile, '--note-lang', 'fr', '--lang', 'fr'], env);
  assert.equal(inFrench.code, 0, inFrench.stderr);
  assert.match(inFrench.stdout, new RegExp(`^${pdfFile} : avis d'opéré de ${market.id}, \\d+ octets\n$`));
  assert.ok((await pdfText()).includes("Avis d'opéré"), '--note-lang fr');
  const badLang = await cli(
    ['contract-note', market.id, '--pdf', join(env.CAURI_CONFIG_DIR as string, 'never.pdf'), '--note-lang', 'de'],
    env,
  );
  assert.deepEqual([badLang.code, badLang.stdout, badLang.stderr], [2, '', 'cauri: --note-lang must be fr or en (got "de")\n']);
  assert.throws(() => readFileSync(join(env.CAURI_CONFIG_DIR as string, 'never.pdf')), /ENOENT/, 'nothing written');
  // A file that cannot be written: one line naming it, no stack trace.
  const nowhere = join(env.CAURI_CONFIG_DIR as string, 'no-such-folder', 'note.pdf');
  const unwritable = await cli(['contract-note', market.id, '--pdf', nowhere], env);
  assert.deepEqual(
    [unwritable.code, unwritable.stdout, unwritable.stderr],
    [1, '', `cauri: cannot write the PDF to ${nowhere} (ENOENT): name a file in a folder that exists and that you can write\n`],
  );
  const noFill = await cli(['contract-note', open.id], env);
  assert.equal(noFill.code, 1);
  assert.match(noFill.stderr, /^cauri: GET \/v1\/orders\/ord_[0-9a-z]+\/contract-note: 409 conflict: /);

  // Amend: the partner answers in the request (200) with the new values.
  const amended = await json(['amend', open.id, '--qty', '20'], env);
  assert.deepEqual([amended.status, amended.order.qty, amended.order.pending_request], [200, 20, null]);
  assert.equal((await c.events('order.amended', open.id)).length, 1);
  const price = await cli(['amend', open.id, '--limit-price-cents', String(KOLA_RESTING + 250)], env);
  assert.equal(price.stdout, `${open.id} amended: qty 20, limit_price_cents ${KOLA_RESTING + 250}; the order is routed\n`, price.stderr);
  // A refusal by the service: one line with the code, the message and each detail.
  const below = await cli(['amend', open.id, '--qty', '0'], env);
  assert.deepEqual([below.code, below.stdout], [1, '']);
  assert.equal(below.stderr, `cauri: POST /v1/orders/${open.id}/amend: 422 validation_error: Invalid qty: minimum (qty: minimum = 0)\n`);
  assert.equal((await cli(['amend', open.id], env)).stderr, 'cauri: give --qty, --limit-price-cents or both\n');
  assert.equal((await cli(['amend', open.id, '--qty', '2.5'], env)).code, 1);

  // Cancel: 200 when the partner answers at once, 202 when it answers later.
  const cancelled = await cli(['cancel', open.id], env);
  assert.equal(cancelled.stdout, `${open.id} cancelled (requested)\n`, cancelled.stderr);
  assert.equal((await c.get(open.id)).status, 'cancelled');
  const pending = await json(['cancel', slow.id], env);
  assert.deepEqual([pending.status, pending.order.status, pending.order.pending_request], [202, 'routed', 'pending_cancel']);
  await c.tick(3000);
  assert.equal((await c.get(slow.id)).cancel_reason, 'requested');
  assert.equal((await c.events('order.cancelled', slow.id)).length, 1);

  const final = await cli(['cancel', open.id], env);
  assert.equal(final.code, 1);
  assert.match(final.stderr, new RegExp(`^cauri: POST /v1/orders/${open.id}/cancel: 409 [a-z_]+: [^\\n]+\\n$`));
});

test('cauri orders cancel whose answer is lost retries with the same Idempotency-Key and gets the first answer', async (t) => {
  const c = await orderContext(t, DATABASES[0]!);
  const att = await c.attestation();
  const order = (
    await c.order({
      rcpt_to: BAOBAB,
      kyc_attestation_id: att,
      instrument: 'KOLA.BRVM',
      side: 'buy',
      qty: 5,
      limit_price_cents: KOLA_RESTING,
    })
  ).body;

  // A proxy in front of the service that passes the first cancel on, then drops the connection
  // instead of returning the answer, as a network failure after the service has done the work would.
  const keys: string[] = [];
  const replayed: (string | null)[] = [];
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => ['authorization', 'content-type', 'accept', 'idempotency-key'].includes(k)),
        ) as Record<string, string>;
        const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
        const answer = await fetch(`${c.base}${req.url ?? ''}`, {
          method: req.method ?? 'GET',
          headers,
          ...(body === undefined ? {} : { body }),
        });
        const text = await answer.text();
        if (req.url?.endsWith('/cancel') === true) {
          keys.push(req.headers['idempotency-key'] as string);
          replayed.push(answer.headers.get('idempotent-replayed'));
          if (keys.length === 1) return req.socket.destroy();
        }
        res
          .writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
            ...(answer.headers.has('idempotent-replayed') ? { 'idempotent-replayed': 'true' } : {}),
          })
          .end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    proxy.closeAllConnections();
    proxy.close();
  });

  const env = cliEnv(t, c, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
  const run = await cli(['cancel', order.id, '--json'], env);
  assert.equal(run.code, 0, run.stderr);
  const answer = JSON.parse(run.stdout) as Json;
  assert.deepEqual([answer.status, answer.order.status, answer.order.cancel_reason], [200, 'cancelled', 'requested']);
  assert.equal(keys.length, 2, 'sent twice');
  assert.equal(keys[0], keys[1], 'with the same key');
  assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
  assert.deepEqual(replayed, [null, 'true'], 'the second answered from the record of the first');
  assert.equal((await c.events('order.cancelled', order.id)).length, 1, 'cancelled once');
});

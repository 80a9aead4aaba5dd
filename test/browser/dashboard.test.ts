import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { resolveMasterKey } from '../../src/config/master-key.js';
import { CursorCodec } from '../../src/http/cursor.js';
import { DASHBOARD_CSP } from '../../src/http/dashboard.routes.js';
import { ManualClock } from '../../src/lib/clock.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { sessionViews } from '../../src/routing/fix/session-view.js';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { createWebhooks } from '../../src/webhooks/index.js';
import { createDeliveryWorker } from '../../src/workers/delivery-worker.js';
import { DATABASES, listen, startRuntime, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { launchChromium } from './chromium.js';
import { receiver } from './receiver.js';

type Json = Record<string, any>;

const BAOBAB = 'sgi_01kdvdna00e5fsxhz2kkrzpb8n';
/** What the page keeps in storage: nothing is expected. */
const STORED = '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })';

/**
 * Screenshots go to docs/screenshots when UPDATE_SCREENSHOTS=1 (npm run dashboard:screenshots), and
 * to a temporary folder otherwise, so that a test run leaves the working tree as it was.
 */
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'cauri-shots-'));
mkdirSync(SHOTS, { recursive: true });

/**
 * Waits until `check` holds. (Playwright's waitForFunction evaluates a string in the page, which the
 * dashboard's Content-Security-Policy rightly refuses.)
 */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

/** The page scrolls sideways when its content is wider than the viewport. */
async function noHorizontalScroll(page: Page, what: string): Promise<void> {
  // Expressions run in the page (this project is compiled without the DOM library).
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>(
    '({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })',
  );
  assert.ok(scroll <= width, `${what}: content is ${scroll}px wide in a ${width}px viewport`);
}

/** The dashboard's catalogues, as compiled for the browser (dashboard/dist). */
async function catalogues(): Promise<{ en: Record<string, string>; fr: Record<string, string> }> {
  const [{ en }, { fr }] = await Promise.all([
    import(new URL('../../../dashboard/dist/i18n/en.js', import.meta.url).href) as Promise<{ en: Record<string, string> }>,
    import(new URL('../../../dashboard/dist/i18n/fr.js', import.meta.url).href) as Promise<{ fr: Record<string, string> }>,
  ]);
  return { en, fr };
}

/**
 * The text a user reads on the page, with what is English on purpose left out: the API's own
 * messages and the name of the other language (marked `lang="en"`). Options, hidden rows and
 * accessible names count; titles (an exchange's own name) do not.
 */
const SHOWN_TEXT = `(() => {
  const copy = document.body.cloneNode(true);
  for (const el of copy.querySelectorAll('[lang="en"], script, style, noscript, pre')) el.remove();
  const attrs = [...copy.querySelectorAll('[aria-label]')].map((el) => el.getAttribute('aria-label'));
  return copy.textContent + ' ' + attrs.join(' ') + ' ' + document.title;
})()`;

/**
 * What is wrong with a page's text in `language`: a missing message (shown as its key between ⟦ ⟧)
 * or, in French, a sentence of the English catalogue that French says differently.
 */
function untranslated(text: string, language: 'en' | 'fr', en: Record<string, string>, fr: Record<string, string>): string[] {
  const found = [...text.matchAll(/\u27e6([^\u27e7]*)\u27e7/g)].map((m) => `missing message ${m[1]}`);
  if (language === 'en') return found;
  for (const [key, english] of Object.entries(en)) {
    if (fr[key] === english) continue;
    // The parts of the message around its values, long enough to be words of the interface.
    for (const part of english.split(/\{\w+\}/)) {
      const words = part
        .trim()
        .replace(/^[(:,.]+|[):,.]+$/g, '')
        .trim();
      if (words.length < 4 || !/[A-Za-z]{3}/.test(words)) continue;
      const escaped = words.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
      // Codes such as order.created or partially_filled are data, not words of the interface.
      if (new RegExp(`(^|[^A-Za-z._])${escaped}($|[^A-Za-z._])`).test(text)) found.push(`English "${words}" (${key})`);
    }
  }
  return found;
}

test('the dashboard is served as static files with a strict policy, and nothing else is reachable', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  for (const url of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
    const res = await runtime.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['content-security-policy'], DASHBOARD_CSP);
    assert.match(String(res.headers['content-security-policy']), /^default-src 'self';/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.doesNotMatch(res.body, /https?:\/\//, 'the page loads nothing from another origin');
  }
  const js = await runtime.app.inject({ method: 'GET', url: '/dashboard/main.js' });
  assert.equal(js.statusCode, 200);
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  const nested = await runtime.app.inject({ method: 'GET', url: '/dashboard/pages/orders.js' });
  assert.equal(nested.statusCode, 200);
  const css = await runtime.app.inject({ method: 'GET', url: '/dashboard/styles.css' });
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  assert.doesNotMatch(css.body, /@import|url\(\s*['"]?https?:/, 'no remote fonts or images');

  for (const url of [
    '/dashboard/../package.json',
    '/dashboard/..%2f..%2fpackage.json',
    '/dashboard/%2e%2e/%2e%2e/package.json',
    '/dashboard/..\\..\\package.json',
    '/dashboard//etc/passwd',
    '/dashboard/%2Fetc%2Fpasswd',
    '/dashboard/pages/../../../tsconfig.json',
    '/dashboard/main.d.ts',
    '/dashboard/.tsbuildinfo',
    '/dashboard/nope.js',
  ]) {
    const res = await runtime.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(JSON.parse(res.body).code, 'not_found', url);
  }
});

test('a developer signs in and manages orders, attestations, webhook endpoints, deliveries and dead letters', async (t) => {
  const clock = new ManualClock(new Date());
  const env = testEnvironment(t, DATABASES[0]!, { CAURI_WORKERS: 'none' }, { clock });
  const runtime = await startRuntimeIn(t, env);
  const base = await listen(runtime);
  // The delivery worker, driven by hand: one pass per call, on the manual clock, without jitter.
  const webhooks = createWebhooks({
    config: runtime.config,
    storage: runtime.storage,
    clock,
    masterKey: resolveMasterKey(runtime.config),
    idempotency: runtime.services.idempotency,
    cursors: new CursorCodec(Buffer.alloc(32)),
    log: runtime.app.log,
    options: { random: () => 0.5, timeoutMs: 2000 },
  });
  const worker = createDeliveryWorker(webhooks);
  t.after(() => worker.stop());

  const client = await runtime.services.clients.create('Dashboard test');
  const api = async (method: string, path: string, body?: unknown, secret = client.client_secret) => {
    const tokenRes = await fetch(`${base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: secret }),
    });
    const { access_token: token } = (await tokenRes.json()) as Json;
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (res.status === 204 ? null : await res.json()) as Json };
  };

  // Data of this client: an attestation and orders (filled, rejected, and enough resting ones to page).
  const day = new Date(clock.now().getTime() - 86_400_000).toISOString().slice(0, 19) + 'Z';
  const att = await api('POST', '/v1/kyc/attestations', {
    subject_id: 'inv-dash-1',
    level: 'KYC2',
    jurisdictions: ['UEMOA'],
    verifications: ['id_doc', 'selfie', 'address', 'liveness'].map((type) => ({ type, verified_at: day })),
  });
  assert.equal(att.status, 201, JSON.stringify(att.body));
  const order = (instrument: string, qty: number, limit?: number) =>
    api('POST', '/v1/orders', {
      rcpt_to: BAOBAB,
      kyc_attestation_id: att.body.id,
      instrument,
      side: 'buy',
      qty,
      ...(limit === undefined ? {} : { limit_price_cents: limit }),
    });
  // One millisecond apart, so that "newest first" has one answer.
  let resting: Json = {};
  for (let i = 0; i < 21; i++) {
    // The band's lower limit (3,145 XOF, -7.5 %): the simulated price never comes down to it.
    const placed = await order('HUILB.BRVM', 1, 314_500);
    assert.equal(placed.status, 201);
    resting = placed.body;
    clock.advance(1);
  }
  const rejected = await order('CIMSN.BRVM', 13);
  clock.advance(1);
  const filled = await order('KOLA.BRVM', 10);
  assert.equal(filled.status, 201);
  clock.advance(1500);
  await runtime.services.router.pollReports();
  const filledNow = (await api('GET', `/v1/orders/${filled.body.id}`)).body;
  assert.equal(filledNow.status, 'filled');
  // These events are fanned out now, to no endpoint: the endpoints registered below only get later ones.
  await worker.runOnce();
  clock.advance(1);

  const context = await launchChromium(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused token exchange and an expired token are 401 responses, which Chromium logs.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  page.setDefaultTimeout(10_000);
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  await t.test('a wrong secret shows a clear message and keeps no token', async () => {
    await page.goto(`${base}/dashboard`);
    await heading('Sign in').waitFor();
    await shot(page, 'signin');
    await page.getByLabel('Client id').fill(client.client_id);
    await page.getByLabel('Client secret').fill('sk_test_wrong-secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong client id or secret. Check both and try again.').waitFor();
    assert.equal(await page.getByLabel('Client secret').inputValue(), '', 'the secret field is cleared');
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
    const stored = await page.evaluate(STORED);
    assert.deepEqual(stored, { local: 0, session: 0, cookie: '' });
  });

  await t.test('the right secret opens the orders, filtered and paged', async () => {
    await page.getByLabel('Client secret').fill(client.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Orders').waitFor();
    const rows = page.locator('table.grid tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 20, 'first page of 20');
    assert.match(await rows.first().innerText(), /KOLA\.BRVM/);
    const stored = await page.evaluate(STORED);
    assert.deepEqual(stored, { local: 0, session: 0, cookie: '' }, 'the token stays in memory');
    await shot(page, 'orders');

    await page.getByRole('link', { name: 'Older →' }).click();
    await until(async () => (await page.locator('table.grid tbody tr').count()) === 3, 'table.grid tbody tr × 3');
    await page.getByRole('link', { name: '← Newer' }).click();
    await until(async () => (await page.locator('table.grid tbody tr').count()) === 20, 'table.grid tbody tr × 20');

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(async () => (await page.locator('table.grid tbody tr').count()) === 1, 'table.grid tbody tr × 1');
    assert.match(await rows.first().innerText(), new RegExp(rejected.body.id));
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Instrument').fill('kola.brvm');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(async () => (await page.locator('table.grid tbody tr').count()) === 1, 'table.grid tbody tr × 1');
    assert.ok(page.url().includes('instrument=KOLA.BRVM'));
  });

  await t.test('an order shows its fills and its events', async () => {
    await page.getByRole('link', { name: filled.body.id }).click();
    await heading(`Order ${filled.body.id}`).waitFor();
    assert.equal(await page.getByTestId('filled-qty').innerText(), '10 of 10');
    assert.match(await page.getByTestId('average-price').innerText(), /XOF$/);
    await page.getByRole('cell', { name: 'order.executed' }).waitFor();
    await page.getByRole('cell', { name: 'order.created' }).waitFor();
    const fills = page.locator('section.card', { has: page.getByRole('heading', { name: 'Fills' }) }).locator('table.grid tbody tr');
    assert.equal(await fills.count(), 1);
    assert.match(await fills.first().innerText(), /fil_\w{26}[\s\S]*BRVM-\d{8}-\d{6}/);
    // Its fees by type and their total, as the API has them, and its settlement status.
    const [fill] = (await api('GET', `/v1/orders/${filled.body.id}/fills`)).body.data as Json[];
    const shownFees = await page.getByTestId('fill-fees').innerText();
    for (const type of ['commission', 'exchange', 'depository', 'regulator', 'tax'])
      assert.match(shownFees, new RegExp(`^${type} [\\d\\s\u202f,]+ XOF$`, 'm'));
    assert.equal(fill?.fees.length, 5);
    assert.match(await fills.first().innerText(), /\d{1,2} [A-Z][a-z]{2} \d{4}\s+pending/, 'the settlement date in words, in UTC');
    // The contract note: fetched with the session's token, offered as a PDF to open or save.
    await page.getByTestId('contract-note').click();
    const open = page.getByTestId('contract-note-open');
    await open.waitFor();
    assert.match((await open.getAttribute('href')) ?? '', /^blob:/);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /^save contract-note-ord_/ }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `contract-note-${filled.body.id}.pdf`);
    const saved = await download.path();
    assert.equal(readFileSync(saved).subarray(0, 5).toString(), '%PDF-');
    assert.equal(await page.getByRole('button', { name: 'Cancel order' }).count(), 0, 'a filled order offers no cancel');
  });

  await t.test('positions show the fills, and a statement declared from the page starts them again with its breaks', async () => {
    await nav('Positions').click();
    await heading('Positions').waitFor();
    const qty = page.getByTestId('qty-inv-dash-1-KOLA.BRVM');
    assert.equal(await qty.innerText(), '10');
    const row = page.locator('table.grid tbody tr', { has: qty });
    const [position] = (await api('GET', '/v1/positions?subject_id=inv-dash-1')).body.data as Json[];
    assert.match(
      await row.innerText(),
      new RegExp(`^inv-dash-1\\s+${BAOBAB}\\s+KOLA\\.BRVM\\s+10\\s+0\\s+\\d{1,3}(,\\d{3})*(\\.\\d\\d)? XOF`),
    );
    assert.equal(position?.average_cost_cents, filledNow.average_fill_price_cents, 'one fill: its price');
    await page.getByText('No statement declared yet.').waitFor();

    // A line the page cannot read, then one the service refuses: each says why, nothing is declared.
    await page.getByLabel('Investor (subject_id)').fill('inv-dash-1');
    await page.getByLabel('SGI (rcpt_to)').fill(BAOBAB);
    const holdings = page.getByLabel(/^Holdings/);
    await holdings.fill('KOLA.BRVM ten 1500000');
    await page.getByRole('button', { name: 'Declare statement' }).click();
    await page
      .getByRole('alert')
      .getByText(/Line 1 should read/)
      .waitFor();
    await holdings.fill('KOLA.BRVM -5 1500000');
    await page.getByRole('button', { name: 'Declare statement' }).click();
    await page
      .getByRole('alert')
      .getByRole('listitem')
      .getByText(/^holdings\.0\.qty:/)
      .waitFor();
    assert.deepEqual((await api('GET', '/v1/positions/statements')).body.data, []);

    await holdings.fill('KOLA.BRVM 25 1500000');
    await page.getByRole('button', { name: 'Declare statement' }).click();
    const result = page.getByTestId('statement-result');
    await result.waitFor();
    assert.match(
      await result.innerText(),
      /Statement stm_\w{26} declared as of \d{1,2} [A-Z][a-z]{2} \d{4}: 1 break\.[\s\S]*KOLA\.BRVM\s+25\s+0\s+\+25/,
    );
    // The statement's 25, plus today's fill, which settles after its date.
    await until(async () => (await qty.innerText()) === '35', 'the position after the statement');
    await page.locator('table.grid tbody tr', { hasText: 'KOLA.BRVM +25' }).waitFor();
    assert.match(await row.innerText(), /since the statement of \d{1,2} [A-Z][a-z]{2} \d{4}/);
    await page.evaluate('window.scrollTo(0, 0)');
    await shot(page, 'positions');

    await page.getByLabel('Subject', { exact: true }).fill('nobody');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No position matches these filters.').waitFor();
    assert.ok(page.url().includes('subject_id=nobody'));
    // The statement's position.break, fanned out now, to no endpoint.
    await worker.runOnce();
  });

  await t.test('an open limit order is amended, then cancelled, from its page', async () => {
    await page.evaluate(`location.hash = ${JSON.stringify(`#/orders/${resting.id}`)}`);
    await heading(`Order ${resting.id}`).waitFor();
    assert.equal(await page.getByTestId('pending-request').innerText(), 'none');
    await page.getByLabel('New quantity').fill('3');
    await page.getByRole('button', { name: 'Amend' }).click();
    await until(async () => (await page.getByTestId('order-qty').innerText()) === '3', 'the amended quantity');
    await page.getByRole('cell', { name: 'order.amended' }).waitFor();
    await page.getByRole('button', { name: 'Cancel order' }).click();
    await until(async () => (await page.getByTestId('order-status').innerText()) === 'cancelled', 'the cancelled status');
    assert.equal(await page.getByTestId('order-reason').innerText(), ' (requested)');
    assert.equal(await page.getByRole('button', { name: 'Amend' }).count(), 0);
    await page.getByRole('cell', { name: 'order.cancelled' }).waitFor();
    // Fanned out now, to no endpoint, like the events of the orders above.
    await worker.runOnce();
  });

  await t.test('an attestation is opened by id and revoked with a reason', async () => {
    await nav('Attestations').click();
    await page.getByLabel('Attestation id').fill(att.body.id);
    await page.getByRole('button', { name: 'Open' }).click();
    await heading(`Attestation ${att.body.id}`).waitFor();
    assert.equal(await page.getByTestId('attestation-status').innerText(), 'active');
    await page.getByLabel('Reason').selectOption('compromised');
    await page.getByRole('button', { name: 'Revoke attestation' }).click();
    await page.getByTestId('attestation-status').getByText('revoked').waitFor();
    const status = await api('GET', `/v1/kyc/attestations/${att.body.id}/status`);
    assert.equal(status.body.status, 'revoked');
    assert.equal(status.body.reason, 'compromised');
    assert.equal(await page.getByRole('button', { name: 'Revoke attestation' }).count(), 0);
  });

  const ok = await receiver(t, 200);
  let okEndpoint = '';
  await t.test('an endpoint is created (secret shown once), tested, edited, disabled and its secret rotated', async () => {
    await nav('Endpoints').click();
    await heading('Webhook endpoints').waitFor();
    await page.getByLabel('URL').fill(ok.url);
    await page.getByLabel('Description (optional)').fill('Local receiver');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = await page.getByTestId('secret').inputValue();
    assert.match(secret, /^whsec_/);
    okEndpoint = (await page.locator('table.grid tbody tr a').first().innerText()).trim();
    assert.match(okEndpoint, /^we_/);

    await page.getByRole('link', { name: 'Open the endpoint →' }).click();
    await heading(`Endpoint ${okEndpoint}`).waitFor();
    assert.equal(await page.getByTestId('secret').count(), 0, 'the secret is not shown again');

    await page.getByLabel('Type').selectOption('order.executed');
    await page.getByLabel('livemode').check();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Test event evt_\w+ \(order\.executed, livemode true\) queued as delivery/).waitFor();
    assert.equal((await worker.runOnce()).attempted, 1);
    assert.equal(ok.received.length, 1);
    // The secret the page showed signs the delivery.
    const received = ok.received[0]!;
    const [tPart, v1] = String(received.headers['x-cauri-signature']).split(',');
    assert.equal(
      v1?.slice(3),
      createHmac('sha256', secret)
        .update(`${tPart?.slice(2)}.${received.body}`)
        .digest('hex'),
    );
    assert.equal(JSON.parse(received.body).livemode, true);

    await page.getByRole('textbox', { name: 'Description', exact: true }).fill('Local receiver (edited)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    assert.equal((await api('GET', `/v1/webhooks/endpoints/${okEndpoint}`)).body.description, 'Local receiver (edited)');

    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.getByRole('button', { name: 'Enable endpoint' }).waitFor();
    assert.equal((await api('GET', `/v1/webhooks/endpoints/${okEndpoint}`)).body.disabled, true);
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();

    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const rotated = await page.getByTestId('secret').inputValue();
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
  });

  await t.test('the delivery is listed with its attempt', async () => {
    await nav('Deliveries').click();
    await heading('Deliveries').waitFor();
    const card = page.locator('article.delivery').first();
    await card.waitFor();
    assert.equal(await card.getAttribute('data-status'), 'succeeded');
    assert.match(await card.innerText(), /order\.executed/);
    assert.equal(await card.locator('tbody tr').count(), 1);
    assert.match(await card.locator('tbody tr').first().innerText(), /200/);
  });

  let executedEvent = '';
  await t.test('the events page lists and filters the events, opens one, sends it again, and follows new ones live', async () => {
    await nav('Events').click();
    await heading('Events').waitFor();
    const stored = page
      .locator('section.card', { has: page.getByRole('heading', { name: 'Stored events' }) })
      .locator('table.grid tbody tr');
    await stored.first().waitFor();
    assert.ok((await stored.count()) >= 20, 'the orders, the attestation and the test event');
    await page.getByLabel('Type').selectOption('order.executed');
    await page.getByRole('button', { name: 'Filter' }).click();
    // The filled order's execution, and the test event of that type sent to the endpoint above.
    await until(async () => (await stored.count()) === 2, 'the two executions');
    for (const row of await stored.all()) assert.match(await row.innerText(), /order\.executed/);
    assert.ok(page.url().includes('type=order.executed'));
    const real = stored.filter({ hasText: filled.body.id });
    assert.equal(await real.count(), 1, 'linked to its order');
    await shot(page, 'events');

    executedEvent = (await real.locator('a').first().innerText()).trim();
    await real.locator('a').first().click();
    await heading(`Event ${executedEvent}`).waitFor();
    assert.equal(await page.getByTestId('event-type').innerText(), 'order.executed');
    const envelope = JSON.parse(await page.getByTestId('envelope').innerText()) as Json;
    assert.deepEqual(envelope, (await api('GET', `/v1/events/${executedEvent}`)).body, 'the envelope as the API gives it');
    await page.getByText('Not delivered to any endpoint.').waitFor();
    await page.getByLabel('To').selectOption(okEndpoint);
    await page.getByRole('button', { name: 'Send again' }).click();
    await page.getByText('1 delivery due now.').waitFor();
    const deliveries = page
      .locator('section.card', { has: page.getByRole('heading', { name: 'Deliveries' }) })
      .locator('table.grid tbody tr');
    assert.equal(await deliveries.count(), 1);
    assert.match(await deliveries.first().innerText(), new RegExp(`${okEndpoint}[\\s\\S]*pending`));
    const before = ok.received.length;
    assert.equal((await worker.runOnce()).attempted, 1);
    assert.equal(JSON.parse(ok.received[before]?.body ?? '{}').id, executedEvent, 'the same event, delivered');

    // Live: an event recorded now shows up once settled (about two seconds, on the service clock).
    await page.getByRole('link', { name: '← All events' }).click();
    await heading('Events').waitFor();
    await page.getByRole('button', { name: 'Follow live' }).click();
    await page.getByText(/^Following/).waitFor();
    const sent = await api('POST', `/v1/webhooks/endpoints/${okEndpoint}/test`, { type: 'order.routed' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    clock.advance(2500);
    const live = page.getByTestId('live-events').locator(`tr[data-event="${sent.body.event.id as string}"]`);
    await live.waitFor();
    assert.match(await live.innerText(), /order\.routed/);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByTestId('live-status').getByText('Stopped.').waitFor();
    await worker.runOnce();
  });

  const failing = await receiver(t, 500);
  let deadEndpoint = '';
  await t.test('deliveries to a failing receiver end in the dead-letter queue', async () => {
    await nav('Endpoints').click();
    await page.getByLabel('URL').fill(failing.url);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByTestId('secret').waitFor();
    await shot(page, 'endpoints');
    await page.getByRole('link', { name: 'Open the endpoint →' }).click();
    deadEndpoint = (await heading(/^Endpoint we_/).innerText()).replace('Endpoint ', '');
    for (let i = 0; i < 2; i++) {
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.getByText(/Test event evt_\w+ \(webhook\.test, livemode false\)/).waitFor();
    }
    // The whole retry schedule, attempt by attempt, on the manual clock.
    const t0 = clock.now().getTime();
    for (const offset of RETRY_SCHEDULE_MS) {
      clock.set(t0 + offset);
      assert.equal((await worker.runOnce()).attempted, 2, `attempts at +${offset} ms`);
    }
    assert.equal(failing.received.length, 16);
  });

  await t.test('an expired session returns to sign-in, and signing in again resumes the page', async () => {
    // A day has passed on the service's clock: the 15-minute token is long expired.
    await nav('Dead letters').click();
    await page.getByText('Your session has expired. Sign in again.').waitFor();
    await heading('Sign in').waitFor();
    assert.equal(await page.getByLabel('Client id').inputValue(), client.client_id, 'the client id is remembered, not the secret');
    assert.equal(await page.getByLabel('Client secret').inputValue(), '');
    await page.getByLabel('Client secret').fill(client.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Dead letters').waitFor();
  });

  await t.test('dead letters are replayed one at a time and all of an endpoint at once', async () => {
    const cards = page.locator('article.delivery');
    await cards.first().waitFor();
    assert.equal(await cards.count(), 2);
    for (const card of await cards.all()) assert.equal(await card.getAttribute('data-status'), 'dead');
    await cards.first().locator('summary').click();
    assert.equal(await cards.first().locator('tbody tr').count(), 8);
    await shot(page, 'dead-letters');

    failing.status = 200;
    await cards.first().getByRole('button', { name: 'Replay' }).click();
    await until(async () => (await page.locator('article.delivery').count()) === 1, 'article.delivery × 1');
    await page.getByRole('button', { name: `Replay all dead of ${deadEndpoint}` }).click();
    await page.getByText(`1 dead delivery of ${deadEndpoint} replayed.`).waitFor();
    await page.getByText('No dead letters.').waitFor();

    clock.advance(1000);
    assert.equal((await worker.runOnce()).attempted, 2);
    await nav('Deliveries').click();
    await page.getByLabel('Endpoint id').fill(deadEndpoint);
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(
      async () => (await page.locator('article.delivery[data-status=succeeded]').count()) === 2,
      'article.delivery[data-status=succeeded] × 2',
    );
    assert.match(await page.locator('article.delivery').first().innerText(), /9 attempts/);
  });

  await t.test("the markets page shows each exchange's clock and its next seven days", async () => {
    await nav('Markets').click();
    await heading('Markets').waitFor();
    for (const code of ['BRVM', 'BVMAC', 'GSE']) {
      const clockNow = (await api('GET', `/v1/exchanges/${code}/clock`)).body;
      assert.equal(
        await page.getByTestId(`phase-${code}`).innerText(),
        `${clockNow.phase.replace(/_/g, ' ')}${clockNow.is_open ? ' open' : ''}`,
      );
    }
    const week = page.locator('table.grid').nth(1).locator('tbody tr');
    assert.equal(await week.count(), 7);
    assert.match(await week.first().innerText(), /^\d{1,2} [A-Z][a-z]{2} \d{4}\s+(\d{2}:\d{2}–\d{2}:\d{2}|closed)/);
    await shot(page, 'markets');
  });

  await t.test('every page in French and in English: the switch is remembered, no message is missing or left in English', async () => {
    const { en, fr } = await catalogues();
    const pages = (language: 'en' | 'fr') =>
      [
        ['#/orders', language === 'en' ? 'Orders' : 'Ordres'],
        [`#/orders/${filled.body.id}`, language === 'en' ? `Order ${filled.body.id}` : `Ordre ${filled.body.id}`],
        ['#/positions', 'Positions'],
        ['#/attestations', 'Attestations'],
        [`#/attestations/${att.body.id}`, `Attestation ${att.body.id}`],
        ['#/events', language === 'en' ? 'Events' : 'Événements'],
        [`#/events/${executedEvent}`, language === 'en' ? `Event ${executedEvent}` : `Événement ${executedEvent}`],
        ['#/endpoints', language === 'en' ? 'Webhook endpoints' : 'Points de réception des webhooks'],
        [`#/endpoints/${okEndpoint}`, language === 'en' ? `Endpoint ${okEndpoint}` : `Point de réception ${okEndpoint}`],
        ['#/deliveries', language === 'en' ? 'Deliveries' : 'Livraisons'],
        ['#/dead', language === 'en' ? 'Dead letters' : 'Lettres mortes'],
        ['#/markets', language === 'en' ? 'Markets' : 'Marchés'],
        ['#/account', language === 'en' ? 'Account' : 'Compte'],
      ] as const;
    const walk = async (language: 'en' | 'fr') => {
      for (const [hash, title] of pages(language)) {
        await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
        await heading(title).waitFor();
        await until(async () => (await page.locator('#app[aria-busy]').count()) === 0, 'page loaded');
        assert.equal(await page.evaluate('document.documentElement.lang'), language, hash);
        assert.deepEqual(untranslated(await page.evaluate<string>(SHOWN_TEXT), language, en, fr), [], `${language} ${hash}`);
      }
    };
    await walk('en');
    assert.equal(await page.locator('button[data-lang="en"][aria-pressed="true"]').count(), 1);

    await page.locator('button[data-lang="fr"]').click();
    await heading('Compte').waitFor();
    assert.equal(await page.getByRole('navigation').getByRole('link', { name: 'Ordres', exact: true }).count(), 1);
    assert.equal(await page.evaluate("localStorage.getItem('cauri.lang')"), 'fr', 'the choice is remembered, and it is all that is stored');
    await walk('fr');
    // French figures: grouped with a (narrow) no-break space, a decimal comma, francs without decimals when whole.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/orders/${filled.body.id}`)}`);
    await heading(`Ordre ${filled.body.id}`).waitFor();
    assert.match(await page.getByTestId('average-price').innerText(), /^\d{1,3}([\u202f\u00a0]\d{3})*(,\d\d)? XOF$/);
    assert.match(await page.getByTestId('filled-qty').innerText(), /^10 sur 10$/);
    assert.match(await page.locator('table.grid tbody tr').first().innerText(), /\d{1,2} [a-zéû]+\.? 20\d\d( à|,)? \d\d:\d\d:\d\d UTC/);
    await shot(page, 'order-fr');

    // A reload forgets the token but not the language: the sign-in page is in French.
    await page.reload();
    await heading('Connexion').waitFor();
    assert.deepEqual(untranslated(await page.evaluate<string>(SHOWN_TEXT), 'fr', en, fr), []);
    await page.getByLabel('Identifiant du client').fill(client.client_id);
    await page.getByLabel('Secret du client').fill('sk_test_wrong-secret');
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.getByText('Identifiant ou secret incorrect. Vérifiez les deux et réessayez.').waitFor();
    await page.getByLabel('Secret du client').fill(client.client_secret);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await heading(`Ordre ${filled.body.id}`).waitFor();
    // An error of the API: its meaning in French by its code, the API's message in English beside it.
    await page.evaluate("location.hash = '#/attestations/att_nope'");
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /^Introuvable\./);
    assert.equal(await alert.getAttribute('data-code'), 'not_found');
    assert.deepEqual(untranslated(await page.evaluate<string>(SHOWN_TEXT), 'fr', en, fr), []);

    await page.locator('button[data-lang="en"]').click();
    await heading('Attestations')
      .waitFor()
      .catch(() => undefined);
    await page.evaluate("location.hash = '#/orders'");
    await heading('Orders').waitFor();
    assert.equal(await page.evaluate("localStorage.getItem('cauri.lang')"), 'en');
  });

  await t.test('the client rotates its own secret; the new one works', async () => {
    await nav('Account').click();
    await heading('Account').waitFor();
    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    const secret = await page.getByTestId('secret').inputValue();
    assert.match(secret, /^sk_test_/);
    assert.notEqual(secret, client.client_secret);
    assert.equal((await api('GET', `/v1/orders/${filled.body.id}`, undefined, secret)).status, 200);
    await page.getByText(/Your previous secret keeps working until/).waitFor();

    // A leaked secret: the box ends every previous secret at once.
    await page.getByLabel(/The previous secret has leaked/).check();
    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    await page.getByText(/Your previous secret has stopped working/).waitFor();
    const replacement = await page.getByTestId('secret').inputValue();
    assert.notEqual(replacement, secret);
    assert.equal((await api('GET', `/v1/orders/${filled.body.id}`, undefined, replacement)).status, 200);
    assert.equal((await api('GET', `/v1/orders/${filled.body.id}`, undefined, secret)).status, 401, 'the previous secret gets no token');
  });

  await t.test('on a phone-sized screen nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, title] of [
      ['#/orders', 'Orders'],
      [`#/orders/${filled.body.id}`, `Order ${filled.body.id}`],
      ['#/positions', 'Positions'],
      [`#/attestations/${att.body.id}`, `Attestation ${att.body.id}`],
      ['#/events', 'Events'],
      [`#/events/${executedEvent}`, `Event ${executedEvent}`],
      ['#/endpoints', 'Webhook endpoints'],
      [`#/endpoints/${okEndpoint}`, `Endpoint ${okEndpoint}`],
      ['#/deliveries', 'Deliveries'],
      ['#/dead', 'Dead letters'],
      ['#/markets', 'Markets'],
      ['#/account', 'Account'],
    ] as const) {
      await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
      await heading(title).waitFor();
      await until(async () => (await page.locator('#app[aria-busy]').count()) === 0, 'page loaded');
      await noHorizontalScroll(page, hash);
      if (hash === '#/orders') await shot(page, 'orders-phone');
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    await noHorizontalScroll(page, 'sign-in');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await t.test('signing out forgets the token', async () => {
    await page.evaluate("location.hash = '#/orders'");
    await heading('Sign in').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
  });

  assert.deepEqual(problems, [], 'no script error and no Content-Security-Policy violation');
});

test('a browser in French opens the dashboard in French, with amounts and dates of its region, and stores nothing until the switch is used', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  const { en, fr } = await catalogues();
  const context = await launchChromium(t, { locale: 'fr-CI' });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${base}/dashboard`);
  await page.getByRole('heading', { level: 1, name: 'Connexion' }).waitFor();
  assert.equal(await page.evaluate('document.documentElement.lang'), 'fr');
  assert.equal(await page.evaluate('document.title'), 'Connexion · tableau de bord cauri');
  assert.deepEqual(untranslated(await page.evaluate<string>(SHOWN_TEXT), 'fr', en, fr), []);
  assert.equal(await page.locator('button[data-lang="fr"][aria-pressed="true"]').count(), 1, 'the switch is visible before signing in');
  assert.deepEqual(await page.evaluate(STORED), { local: 0, session: 0, cookie: '' }, "the browser's language is not stored");
  await page.locator('button[data-lang="en"]').click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  assert.equal(await page.evaluate("localStorage.getItem('cauri.lang')"), 'en', 'a choice made with the switch is');
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
});

test("an operators' client sees each FIX partner's session; an integrator's client has no such view", async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'all' });
  const base = await listen(runtime);
  // Two SGI gateways: one takes the connection and never answers the Logon, one refuses connections.
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const refusing = createServer();
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const refusedPort = (refusing.address() as { port: number }).port;
  await new Promise<void>((resolve) => refusing.close(() => resolve()));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const fix = (port: number, target: string) => ({ host: '127.0.0.1', port, sender_comp_id: 'CAURI', target_comp_id: target, tls: false });
  const report = await runtime.storage.transact((trx) =>
    importPartners(
      trx,
      [
        {
          name: 'Silent Titres',
          jurisdiction: 'UEMOA',
          capabilities: ['equities'],
          connector: 'fix',
          fix: fix((silent.address() as { port: number }).port, 'SILENT'),
        },
        { name: 'Closed Titres', jurisdiction: 'UEMOA', capabilities: ['equities'], connector: 'fix', fix: fix(refusedPort, 'CLOSED') },
      ],
      { now: new Date(), fixPlaintextAllowed: true },
    ),
  );
  const [silentId, closedId] = report.applied.map((a) => a.id) as [string, string];
  for (const id of [silentId, closedId]) runtime.services.connectors.get('fix', id);
  await until(
    async () => {
      const views = await sessionViews(runtime.storage.db, Date.now());
      return (
        views.find((v) => v.partner_id === silentId)?.state === 'connecting' &&
        views.find((v) => v.partner_id === closedId)?.last_error != null
      );
    },
    'both sessions to be tried',
    20_000,
  );

  const integrator = await runtime.services.clients.create('Integrator');
  const operator = await runtime.services.clients.create('Operations', ['operator:read']);

  const context = await launchChromium(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  page.setDefaultTimeout(10_000);
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const signIn = async (clientId: string, secret: string) => {
    await page.getByLabel('Client id').fill(clientId);
    await page.getByLabel('Client secret').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  await t.test("an integrator's client: no FIX sessions section, and the page refuses it", async () => {
    await page.goto(`${base}/dashboard`);
    await heading('Sign in').waitFor();
    await signIn(integrator.client_id, integrator.client_secret);
    await heading('Orders').waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'FIX sessions' }).count(), 0);
    await page.evaluate("location.hash = '#/sessions'");
    await page.getByText('Missing scope: operator:read').waitFor();
    assert.equal(await page.locator('table.grid').count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
  });

  await t.test("an operators' client lands on the sessions and reads what the command line reads", async () => {
    await page.evaluate("location.hash = ''");
    await signIn(operator.client_id, operator.client_secret);
    await heading('FIX sessions').waitFor();
    assert.equal(
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'FIX sessions' }).getAttribute('aria-current'),
      'page',
    );
    const rows = page.locator('table.grid tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match(await rows.first().innerText(), new RegExp(`Silent Titres\\s+${silentId}`));
    assert.equal(await page.getByTestId(`state-${silentId}`).innerText(), 'connecting');
    assert.match(await page.getByTestId(`error-${closedId}`).innerText(), /ECONNREFUSED/);
    // The figures are the stored ones: refreshed until a reading of the page and of the database agree.
    const shown = async (id: string) =>
      `${await page.getByTestId(`seq-out-${id}`).innerText()}/${await page.getByTestId(`seq-in-${id}`).innerText()}`;
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await heading('FIX sessions').waitFor();
      const stored = new Map(
        (await sessionViews(runtime.storage.db, Date.now())).map((v) => [v.partner_id, `${v.next_sender_seq}/${v.next_target_seq}`]),
      );
      return (await shown(silentId)) === stored.get(silentId) && (await shown(closedId)) === stored.get(closedId);
    }, 'the page to show the stored sequence numbers');
    assert.ok(Number(await page.getByTestId(`seq-out-${silentId}`).innerText()) >= 2, 'the Logon went out');
    await shot(page, 'fix-sessions');
    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(page, '#/sessions');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

test('the API documentation at /docs renders under its policy, without a CSP violation', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  const context = await launchChromium(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
  });
  const res = await page.goto(`${base}/docs`);
  const policy = String(res?.headers()['content-security-policy']);
  assert.match(policy, /script-src 'self';/);
  assert.doesNotMatch(
    policy,
    /unsafe-inline|upgrade-insecure-requests|https:/,
    'no inline script or style beyond the hashed ones, nothing from elsewhere',
  );
  // Swagger UI has drawn the document: its title and an operation of each tag.
  await page.getByRole('heading', { name: /brokerage order routing/ }).waitFor({ timeout: 15_000 });
  await page.getByText('/v1/orders', { exact: true }).first().waitFor();
  // Its logo (an SVG with a <style> element) is drawn too: the style the policy admits by hash.
  await page.locator('.topbar svg, .topbar img').first().waitFor();
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(problems, [], 'no script error and no Content-Security-Policy violation');
});

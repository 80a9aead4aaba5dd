import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { DASHBOARD_CSP } from '../../src/http/dashboard.routes.js';
import { importPartners } from '../../src/partners/partner.service.js';
import { sessionViews } from '../../src/routing/fix/session-view.js';
import { DATABASES, listen, startRuntime } from '../support/harness.js';
import { launchChromium } from './chromium.js';
import { STORED, SHOWN_TEXT, catalogues, noHorizontalScroll, shot, until, untranslated, watchedPage } from './dashboard-session.js';

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

  const { page } = await watchedPage(t);
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
    // The figures are the stored ones: refreshed until a reading of the page and of the database agree.
    // The silent gateway's session cycles: connecting, dropped when no Logon answer came in time, connecting again.
    const shown = async (id: string) => {
      const error = page.getByTestId(`error-${id}`);
      return [
        await page.getByTestId(`state-${id}`).innerText(),
        await page.getByTestId(`seq-out-${id}`).innerText(),
        await page.getByTestId(`seq-in-${id}`).innerText(),
        (await error.count()) === 0 ? null : await error.innerText(),
      ].join('|');
    };
    await until(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await heading('FIX sessions').waitFor();
        const stored = new Map(
          (await sessionViews(runtime.storage.db, Date.now())).map((v) => [
            v.partner_id,
            [v.state, v.next_sender_seq, v.next_target_seq, v.last_error].join('|'),
          ]),
        );
        return (await shown(silentId)) === stored.get(silentId) && (await shown(closedId)) === stored.get(closedId);
      },
      'the page to show the stored sessions',
      20_000,
    );
    const silentState = await page.getByTestId(`state-${silentId}`).innerText();
    assert.ok(['connecting', 'disconnected'].includes(silentState), silentState);
    if (silentState === 'disconnected') assert.match(await page.getByTestId(`error-${silentId}`).innerText(), /no Logon answer/);
    assert.match(await page.getByTestId(`error-${closedId}`).innerText(), /ECONNREFUSED/);
    assert.ok(Number(await page.getByTestId(`seq-out-${silentId}`).innerText()) >= 2, 'the Logon went out');
    await shot(page, 'fix-sessions');
    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(page, '#/sessions');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

test('a page whose answer comes after the reader moved on never draws over the page shown now', async (t) => {
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none' });
  const base = await listen(runtime);
  const client = await runtime.services.clients.create('Integrator');
  const { page, problems } = await watchedPage(t);
  const heading = (name: string) => page.getByRole('heading', { level: 1, name });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Client id').fill(client.client_id);
  await page.getByLabel('Client secret').fill(client.client_secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading('Orders').waitFor();

  // The deliveries' answer is held on the network until the reader is on another page.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/v1\/webhooks\/deliveries/, async (route) => {
    await released;
    await route.continue();
  });
  const held = page.waitForEvent('requestfinished', (request) => request.url().includes('/v1/webhooks/deliveries'));
  await nav('Deliveries').click();
  await page.getByText('Loading').waitFor();
  await nav('Orders').click();
  await heading('Orders').waitFor();
  release();
  await held;
  // A few turns of the page's event loop: the late answer has been read and drawn where it belongs.
  await page.evaluate('new Promise((resolve) => setTimeout(resolve, 200))');
  assert.equal(await heading('Orders').count(), 1, 'the orders are still shown');
  assert.equal(await heading('Deliveries').count(), 0, 'the late deliveries were not drawn over them');
  assert.equal(await page.getAttribute('#app', 'aria-busy'), null);
  assert.deepEqual(problems, []);
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

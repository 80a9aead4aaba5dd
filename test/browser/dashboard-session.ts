import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.js';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { launchChromium } from './chromium.js';
import { startDeliveryWorker } from '../support/delivery-worker.js';

// What the dashboard's browser tests share: a developer's session of the dashboard (the pages' tests
// each start one), waiting in the page, screenshots, and the checks of the page's text and layout.

export type Json = Record<string, any>;

export const BAOBAB = 'sgi_01kdvdna00e5fsxhz2kkrzpb8n';
/** What the page keeps in storage: nothing is expected. */
export const STORED = '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })';

/**
 * Screenshots go to docs/screenshots when UPDATE_SCREENSHOTS=1 (npm run dashboard:screenshots), and
 * to a temporary folder otherwise, so that a test run leaves the working tree as it was.
 */
export const SHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'cauri-shots-'));
mkdirSync(SHOTS, { recursive: true });

/**
 * Waits until `check` holds. (Playwright's waitForFunction evaluates a string in the page, which the
 * dashboard's Content-Security-Policy rightly refuses.) The default wait is long: it only matters when
 * something is slow (a busy machine running the browser, the service and other test files at once),
 * never when a check passes.
 */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

/** The page scrolls sideways when its content is wider than the viewport. */
export async function noHorizontalScroll(page: Page, what: string): Promise<void> {
  // Expressions run in the page (this project is compiled without the DOM library).
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>(
    '({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })',
  );
  assert.ok(scroll <= width, `${what}: content is ${scroll}px wide in a ${width}px viewport`);
}

/** The dashboard's catalogues, as compiled for the browser (dashboard/dist). */
export async function catalogues(): Promise<{ en: Record<string, string>; fr: Record<string, string> }> {
  const [{ en }, { fr }] = await Promise.all([
    import(new URL('../../../dashboard/dist/i18n/en.js', import.meta.url).href) as Promise<{ en: Record<string, string> }>,
    import(new URL('../../../dashboard/dist/i18n/fr.js', import.meta.url).href) as Promise<{ fr: Record<string, string> }>,
  ]);
  return { en, fr };
}

/**
 * The text a user reads on the page, with what is English on purpose left out: the API's own
 * messages and the name of the other language (marked `lang="en"`), and proper names, which no
 * language translates (an exchange's own name, marked `translate="no"`). Options, hidden rows and
 * accessible names count; titles do not.
 */
export const SHOWN_TEXT = `(() => {
  const copy = document.body.cloneNode(true);
  for (const el of copy.querySelectorAll('[lang="en"], [translate="no"], script, style, noscript, pre')) el.remove();
  const attrs = [...copy.querySelectorAll('[aria-label]')].map((el) => el.getAttribute('aria-label'));
  return copy.textContent + ' ' + attrs.join(' ') + ' ' + document.title;
})()`;

/**
 * What is wrong with a page's text in `language`: a missing message (shown as its key between ⟦ ⟧)
 * or, in French, a sentence of the English catalogue that French says differently.
 */
export function untranslated(text: string, language: 'en' | 'fr', en: Record<string, string>, fr: Record<string, string>): string[] {
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

/**
 * A Chromium page whose script errors and Content-Security-Policy violations are kept in `problems`
 * (a test ends by finding none), waiting at most 10 s for anything.
 */
export async function watchedPage(t: TestContext): Promise<{ page: Page; problems: string[] }> {
  const context = await launchChromium(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused token exchange and an expired token are 401 responses, which Chromium logs.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  // As long as until()'s wait, for the same reason.
  page.setDefaultTimeout(30_000);
  return { page, problems };
}

/**
 * A developer's session of the dashboard: the service on a manual clock, its delivery worker driven
 * by hand, a client with an attestation and orders (filled, rejected, and enough resting ones to
 * page), whose events are already fanned out (to no endpoint), and a Chromium page that records
 * script errors and Content-Security-Policy violations in `problems`. Nothing is signed in yet.
 */
export async function developerSession(t: TestContext) {
  const clock = new ManualClock(new Date());
  const env = testEnvironment(t, DATABASES[0]!, { CAURI_WORKERS: 'none' }, { clock });
  const runtime = await startRuntimeIn(t, env);
  const base = await listen(runtime);
  // The delivery worker, driven by hand: one pass per call, on the manual clock.
  const worker = startDeliveryWorker(t, runtime, clock, { timeoutMs: 2000 });

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

  const { page, problems } = await watchedPage(t);
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  /** Signs in with the client's secret from the sign-in page; the orders page opens. */
  const signIn = async () => {
    await page.goto(`${base}/dashboard`);
    await heading('Sign in').waitFor();
    await page.getByLabel('Client id').fill(client.client_id);
    await page.getByLabel('Client secret').fill(client.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Orders').waitFor();
  };

  return { clock, runtime, base, worker, client, api, att, resting, rejected, filled, filledNow, page, problems, nav, heading, signIn };
}

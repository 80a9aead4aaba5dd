import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, startRuntime } from '../support/harness.js';
import { freePort } from '../docs/shell.js';
import { launchChromium } from './chromium.js';

// Swagger UI at /docs, in a real browser: its Authorize dialog gets a token through the document's
// oauth2 client credentials scheme, and "Try it out" calls a protected operation with it.
test('Swagger UI at /docs fetches a token with client credentials and calls a protected operation', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const runtime = await startRuntime(t, DATABASES[0]!, { CAURI_WORKERS: 'none', CAURI_PUBLIC_URL: base });
  await runtime.app.listen({ host: '127.0.0.1', port });
  const client = await runtime.services.clients.create('Swagger UI', ['orders:read']);

  const context = await launchChromium(t);
  const page = await context.newPage();
  const seen: Array<{ url: string; status: number; authorization: string | undefined }> = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.pathname === '/v1/auth/token' || url.pathname === '/v1/orders') {
      seen.push({ url: url.pathname, status: response.status(), authorization: response.request().headers().authorization });
    }
  });

  await page.goto(`${base}/docs/`);
  await page.locator('.auth-wrapper .btn.authorize').click();
  const oauth = page.locator('.auth-container').filter({ hasText: 'clientCredentials' });
  await oauth.locator('input[data-name="clientId"]').fill(client.client_id);
  await oauth.locator('input[data-name="clientSecret"]').fill(client.client_secret);
  await oauth.locator('button.authorize').click();
  await page.locator('.modal-ux').getByText('Authorized', { exact: true }).waitFor({ timeout: 10_000 });
  await page.locator('.modal-ux .btn-done, .modal-ux .close-modal').first().click();

  const operation = page.locator('#operations-Orders-listOrders');
  await operation.locator('.opblock-summary').first().click();
  await operation.getByRole('button', { name: 'Try it out' }).click();
  await operation.getByRole('button', { name: 'Execute' }).click();
  await operation.locator('.live-responses-table .response-col_status').first().waitFor({ timeout: 10_000 });

  const token = seen.find((s) => s.url === '/v1/auth/token');
  assert.equal(token?.status, 200, JSON.stringify(seen));
  const call = seen.find((s) => s.url === '/v1/orders');
  assert.equal(call?.status, 200, JSON.stringify(seen));
  assert.match(call?.authorization ?? '', /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
});

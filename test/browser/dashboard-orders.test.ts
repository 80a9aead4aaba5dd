import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BAOBAB, STORED, catalogues, developerSession, shot, until, type Json } from './dashboard-session.js';

// The pages of a developer's orders: signing in, the orders and an order, positions and statements,
// amending and cancelling, an attestation, the markets.
test('a developer signs in and manages orders, positions and attestations, and reads the markets', async (t) => {
  const { base, api, worker, client, att, resting, rejected, filled, filledNow, page, problems, nav, heading } = await developerSession(t);

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

  await t.test("the markets page shows each exchange's clock and its next seven days", async () => {
    await nav('Markets').click();
    await heading('Markets').waitFor();
    // Each phase by its name in the English catalogue (`pre_open` reads "pre-open").
    const { en } = await catalogues();
    for (const code of ['BRVM', 'BVMAC', 'GSE']) {
      const clockNow = (await api('GET', `/v1/exchanges/${code}/clock`)).body;
      const phase = en[`status.${clockNow.phase}`];
      assert.ok(phase !== undefined, `no English name for the phase ${clockNow.phase}`);
      assert.equal(await page.getByTestId(`phase-${code}`).innerText(), `${phase}${clockNow.is_open ? ` ${en['markets.open']}` : ''}`);
    }
    // Each exchange as the API describes it: its code, name and jurisdiction beside its currency and cycle.
    for (const exchange of (await api('GET', '/v1/exchanges')).body.data as Json[]) {
      const row = page.locator('table.grid tbody tr', { has: page.getByTestId(`exchange-${exchange.code as string}`) });
      const cells = (await row.locator('td').allInnerTexts()).map((text) => text.trim());
      assert.deepEqual(
        [cells[0], cells[1], cells[5], cells[6]],
        [`${exchange.code}\n${exchange.name}`, exchange.jurisdiction, exchange.currency, `T+${exchange.settlement_days}`],
      );
    }
    const week = page.locator('table.grid').nth(1).locator('tbody tr');
    assert.equal(await week.count(), 7);
    assert.match(await week.first().innerText(), /^\d{1,2} [A-Z][a-z]{2} \d{4}\s+(\d{2}:\d{2}–\d{2}:\d{2}|closed)/);
    await shot(page, 'markets');
  });

  assert.deepEqual(problems, [], 'no script error and no Content-Security-Policy violation');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { developerSession, shot, until, type Json } from './dashboard-session.js';
import { receiver } from './receiver.js';

// The pages of a developer's webhooks: endpoints, deliveries, events, dead letters.
test('a developer manages webhook endpoints, deliveries, events and dead letters', async (t) => {
  const { clock, api, worker, client, filled, page, problems, nav, heading, signIn } = await developerSession(t);
  await signIn();

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
    // The dead letters' page has the same filter: fill the one of the deliveries' page.
    await heading('Deliveries').waitFor();
    await page.getByLabel('Endpoint id').fill(deadEndpoint);
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(
      async () => (await page.locator('article.delivery[data-status=succeeded]').count()) === 2,
      'article.delivery[data-status=succeeded] × 2',
    );
    assert.match(await page.locator('article.delivery').first().innerText(), /9 attempts/);
  });

  assert.deepEqual(problems, [], 'no script error and no Content-Security-Policy violation');
});

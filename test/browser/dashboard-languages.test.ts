import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BAOBAB,
  SHOWN_TEXT,
  catalogues,
  developerSession,
  noHorizontalScroll,
  shot,
  until,
  untranslated,
  type Json,
} from './dashboard-session.js';
import { receiver } from './receiver.js';

// Every page of the dashboard in both languages and on a phone-sized screen, and the account page.
test('every page in French and in English and on a phone, the client rotating its own secret, and signing out', async (t) => {
  const { api, client, att, resting, rejected, filled, page, problems, nav, heading, signIn } = await developerSession(t);
  // An endpoint and an event of the filled order, for the pages that show one.
  const ok = await receiver(t, 200);
  const created = await api('POST', '/v1/webhooks/endpoints', { url: ok.url, events: ['order.executed'] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const okEndpoint = created.body.id as string;
  const executed = (await api('GET', '/v1/events?type=order.executed')).body.data as Json[];
  const executedEvent = executed[0]?.id as string;
  assert.match(executedEvent, /^evt_/);
  await signIn();

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
    // French words agree with what they describe: a cancelled delivery (une livraison) is "annulée",
    // an order with no refusal shows "aucun" (un refus).
    await page.evaluate("location.hash = '#/deliveries'");
    await heading('Livraisons').waitFor();
    assert.equal(await page.locator('select[name=status] option[value=cancelled]').innerText(), 'annulée');
    await page.evaluate(`location.hash = ${JSON.stringify(`#/orders/${filled.body.id}`)}`);
    await heading(`Ordre ${filled.body.id}`).waitFor();
    assert.equal(await page.locator('dt:text-is("Dernier refus") + dd').innerText(), 'aucun');
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

  await t.test(
    'the values of the API shown in words are in French too: reasons, pending requests, a date of validity, verifications, breaks',
    async () => {
      // A cancel the partner answers later (the test value 202: the manual clock never brings the answer),
      // an amend the partner refuses (the test value 13), and a statement with a break of 1,500.
      const placed = await api('POST', '/v1/orders', {
        rcpt_to: BAOBAB,
        kyc_attestation_id: att.body.id,
        instrument: 'HUILB.BRVM',
        side: 'buy',
        qty: 202,
        limit_price_cents: 314_500,
      });
      assert.equal(placed.status, 201, JSON.stringify(placed.body));
      const cancel = await api('POST', `/v1/orders/${placed.body.id}/cancel`, {});
      assert.equal(cancel.status, 202, JSON.stringify(cancel.body));
      assert.equal(cancel.body.pending_request, 'pending_cancel');
      const amend = await api('POST', `/v1/orders/${resting.id}/amend`, { qty: 13 });
      assert.equal(amend.body.last_refusal?.reason, 'partner_refused', JSON.stringify(amend.body));
      // A good-till-date order: its date in words, once; the first of a month, which French writes `1er`.
      const now = new Date();
      const expireDate = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1)).toISOString().slice(0, 10);
      const gtd = await api('POST', '/v1/orders', {
        rcpt_to: BAOBAB,
        kyc_attestation_id: att.body.id,
        instrument: 'HUILB.BRVM',
        side: 'buy',
        qty: 1,
        limit_price_cents: 314_500,
        time_in_force: 'gtd',
        expire_date: expireDate,
      });
      assert.equal(gtd.status, 201, JSON.stringify(gtd.body));
      const statement = await api('POST', '/v1/positions/statements', {
        subject_id: 'inv-dash-1',
        rcpt_to: BAOBAB,
        as_of: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
        holdings: [{ instrument: 'KOLA.BRVM', qty: 1500, average_cost_cents: 1_500_000 }],
      });
      assert.equal(statement.status, 201, JSON.stringify(statement.body));

      const { en, fr } = await catalogues();
      const open = async (hash: string, title: string) => {
        await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
        await heading(title).waitFor();
        await until(async () => (await page.locator('#app[aria-busy]').count()) === 0, 'page loaded');
      };
      await open(`#/orders/${rejected.body.id}`, `Order ${rejected.body.id}`);
      assert.equal(await page.getByTestId('order-reason').innerText(), ' (rejected by the SGI)');

      await open(`#/orders/${gtd.body.id}`, `Order ${gtd.body.id}`);
      const expiry = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${expireDate}T00:00:00Z`));
      assert.equal(await page.getByTestId('order-tif').innerText(), `good till ${expiry}`);
      await page.locator('button[data-lang="fr"]').click();
      await heading(`Ordre ${gtd.body.id}`).waitFor();
      const expiryFr = new Intl.DateTimeFormat('fr-FR', { month: 'short', year: 'numeric', timeZone: 'UTC' }).format(
        new Date(`${expireDate}T00:00:00Z`),
      );
      assert.equal(await page.getByTestId('order-tif').innerText(), `valable jusqu'au 1er ${expiryFr}`);
      await open(`#/orders/${rejected.body.id}`, `Ordre ${rejected.body.id}`);
      const french = async (what: string) =>
        assert.deepEqual(untranslated(await page.evaluate<string>(SHOWN_TEXT), 'fr', en, fr), [], what);
      assert.equal(await page.getByTestId('order-reason').innerText(), ' (rejeté par la SGI)');
      await french('a failed order');
      await open(`#/orders/${placed.body.id}`, `Ordre ${placed.body.id}`);
      assert.equal(await page.getByTestId('pending-request').innerText(), 'annulation en attente');
      await french('a pending cancel');
      await open(`#/orders/${resting.id}`, `Ordre ${resting.id}`);
      await page.getByText(/^modification refusée : refusé par la SGI, /).waitFor();
      await french('a refused amend');
      await open(`#/attestations/${att.body.id}`, `Attestation ${att.body.id}`);
      const verifications = page.locator('section.card', { has: page.getByRole('heading', { name: 'Vérifications' }) });
      for (const type of ["pièce d'identité", 'selfie', 'justificatif de domicile', 'vidéo de preuve de vie'])
        await verifications.getByRole('cell', { name: type, exact: true }).waitFor();
      await french('the verifications');
      // A break in figures of the language (a narrow no-break space groups the thousands in French).
      await open('#/positions', 'Positions');
      await page.locator('table.grid tbody tr', { hasText: /KOLA\.BRVM \+1[\u202f\u00a0]500/ }).waitFor();
      // Its position.break event names the statement, a link to the positions it concerns.
      await open('#/events?type=position.break', 'Événements');
      const about = page.getByRole('link', { name: statement.body.id as string, exact: true });
      await about.waitFor();
      assert.equal(await about.getAttribute('href'), `#/positions?subject_id=inv-dash-1&rcpt_to=${BAOBAB}`);
      await french('the position.break event');

      await page.locator('button[data-lang="en"]').click();
      await heading('Events').waitFor();
    },
  );

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

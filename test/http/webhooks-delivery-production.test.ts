import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES } from '../support/harness.js';
import { receiver, setup, type Json } from './webhooks-delivery-support.js';

for (const database of DATABASES)
  describe(`webhook delivery in production on ${database.name}`, () => {
    const production = { CAURI_MODE: 'production', CAURI_PUBLIC_URL: 'https://api.cauri.example' };

    test('private, loopback and link-local receivers are refused at registration', async (t) => {
      const c = await setup(t, database, production);
      for (const url of [
        'https://127.0.0.1/hooks',
        'https://10.0.0.1/hooks',
        'https://169.254.169.254/latest',
        'https://[::1]/hooks',
        'https://localhost/hooks',
        'https://2130706433/',
      ]) {
        const res = await c.api.post('/v1/webhooks/endpoints', { url, events: ['order.created'] });
        assert.equal(res.status, 422, url);
        const body = (await res.json()) as Json;
        assert.deepEqual([body.details[0].field, body.details[0].rule], ['url', 'private_address'], url);
      }
      const plain = await c.api.post('/v1/webhooks/endpoints', { url: 'http://hooks.example.com/', events: ['order.created'] });
      assert.equal(((await plain.json()) as Json).details[0].rule, 'https_required');
    });

    test('at delivery time, a name resolving to a private address and literal private addresses are refused without connecting', async (t) => {
      const c = await setup(t, database, production, {
        resolve: async (hostname) => [{ address: hostname === 'rebound.example.com' ? '127.0.0.1' : '93.184.215.14', family: 4 }],
      });
      const r = await receiver(t, c.clock);
      const port = new URL(r.url).port;
      // Registered while the name pointed elsewhere; it now resolves to loopback.
      const rebound = await c.endpoint(`https://rebound.example.com:${port}/hooks`);
      // Rows as an older rule set might have left them: only the delivery-time check stands in the way.
      const literals = ['https://127.0.0.1:PORT/', 'https://10.0.0.1/', 'https://169.254.169.254/', 'https://[::1]:PORT/'].map((u) =>
        u.replace('PORT', port),
      );
      for (const url of literals) {
        const ep = await c.endpoint('https://hooks.example.com/placeholder');
        await c.runtime.storage.db.updateTable('webhook_endpoints').set({ url }).where('id', '=', ep.id).execute();
      }
      await c.emit();
      const report = await c.worker.runOnce();
      assert.equal(report.attempted, 5);
      assert.equal(r.received.length, 0, 'nothing reached the loopback receiver');
      const deliveries = await c.deliveries();
      assert.equal(deliveries.length, 5);
      for (const d of deliveries) {
        assert.equal(d.attempts[0].status_code, null);
        assert.match(d.attempts[0].error, /^address refused/);
      }
      const reboundError = deliveries.find((d) => d.endpoint_id === rebound.id)?.attempts[0].error;
      assert.match(reboundError, /rebound.example.com resolves to an address that is not public/);
      // The client sees which name was refused, never what it resolved to (the deployment's internal network).
      assert.doesNotMatch(reboundError, /127\.0\.0\.1/);
    });

    test('with the system resolver, localhost is refused at delivery time', async (t) => {
      const c = await setup(t, database, production);
      const r = await receiver(t, c.clock);
      const ep = await c.endpoint('https://hooks.example.com/placeholder');
      await c.runtime.storage.db
        .updateTable('webhook_endpoints')
        .set({ url: `https://localhost:${new URL(r.url).port}/hooks` })
        .where('id', '=', ep.id)
        .execute();
      await c.emit();
      await c.worker.runOnce();
      assert.equal(r.received.length, 0);
      assert.match((await c.deliveries())[0]?.attempts[0].error, /address refused: localhost resolves to an address that is not public/);
    });
  });

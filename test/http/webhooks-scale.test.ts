import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../../src/app.js';
import { resolveMasterKey } from '../../src/config/master-key.js';
import { CursorCodec } from '../../src/http/cursor.js';
import { IdempotencyService } from '../../src/idempotency/idempotency.service.js';
import { systemClock } from '../../src/lib/clock.js';
import { newId, type ClientId } from '../../src/lib/ids.js';
import { createWebhooks } from '../../src/webhooks/index.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/workers/delivery-worker.js';
import { DATABASES, testEnvironment } from '../support/harness.js';

const EVENTS = 10_000;
const CLIENTS = 10;
const postgres = DATABASES.find((d) => d.name === 'postgres');

// Both ways a worker runs: step by step (runOnce: fan-out, claim and record each in a transaction of
// its own), and started (one combined transaction per turn, first attempts leased at fan-out).
for (const mode of ['step by step', 'started'] as const) {
  test(`two workers on one PostgreSQL database, ${mode}, deliver 10,000 events with no attempt sent twice`, {
    skip: postgres === undefined ? 'TEST_DATABASE_URL is not set' : false,
    timeout: 150_000,
  }, async (t) => {
    const e = testEnvironment(t, postgres!, { CAURI_WORKERS: 'none', CAURI_SEED: 'false' });
    const seen = new Map<string, number>();
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const key = req.headers['x-cauri-idempotency-key'] as string;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

    // Two "processes": each its own connection pool and its own worker identity.
    const masterKey = resolveMasterKey(e.config);
    const instances: {
      name: string;
      storage: Awaited<ReturnType<typeof openDatabase>>;
      webhooks: ReturnType<typeof createWebhooks>;
      worker: DeliveryWorker;
    }[] = [];
    // Opened one after the other: each open runs the (idempotent) migrations.
    for (const name of ['a', 'b']) {
      instances.push(
        await (async () => {
          const storage = await openDatabase(e.config, e.options);
          t.after(() => storage.close());
          const webhooks = createWebhooks({
            config: e.config,
            storage,
            clock: systemClock,
            masterKey,
            idempotency: new IdempotencyService(
              storage.db,
              (work) => storage.db.transaction().execute(work),
              systemClock,
              storage.dialect,
              Buffer.alloc(32),
            ),
            cursors: new CursorCodec(Buffer.alloc(32)),
            log: {
              error() {},
              warn() {},
              info() {},
              debug() {},
              trace() {},
              fatal() {},
              child() {
                return this;
              },
              level: 'silent',
              silent() {},
            } as never,
            options: { owner: `worker-${name}`, perEndpointConcurrency: 8, maxInFlight: 64, dispatchBatch: 500 },
          });
          const worker = createDeliveryWorker(webhooks);
          t.after(() => worker.stop());
          return { name, storage, webhooks, worker };
        })(),
      );
    }
    const { db } = instances[0]!.storage;
    const endpoints = instances[0]!.webhooks.service.endpoints;
    const clients = Array.from({ length: CLIENTS }, () => newId('client'));
    for (const clientId of clients)
      await db.transaction().execute((trx) => endpoints.create(trx, clientId as ClientId, { url, events: ['order.created'] }));

    const now = Date.now();
    const rows = Array.from({ length: EVENTS }, (_, i) => ({
      id: newId('event', now),
      client_id: clients[i % CLIENTS] as string,
      type: 'order.created',
      livemode: 0,
      created_at: now + 1,
      data: JSON.stringify({ n: i }),
      subject_ref: null,
    }));
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('events').values(chunk).execute();
        await trx
          .insertInto('event_queue')
          .values(chunk.map((r) => ({ event_id: r.id })))
          .execute();
      });
    }

    const started = performance.now();
    const attempted = new Map<string, number>();
    if (mode === 'step by step') {
      await Promise.all(
        instances.map(async ({ name, worker }) => {
          let idle = 0;
          while (idle < 3 && performance.now() - started < 120_000) {
            const report = await worker.runOnce();
            attempted.set(name, (attempted.get(name) ?? 0) + report.attempted);
            idle = report.attempted === 0 && report.dispatched === 0 ? idle + 1 : 0;
            if (idle > 0) await new Promise((r) => setTimeout(r, 20));
          }
        }),
      );
    } else {
      for (const { worker } of instances) worker.start();
      const total = () => instances.reduce((n, { worker }) => n + worker.stats.record.units, 0);
      while (total() < EVENTS && performance.now() - started < 120_000) await new Promise((r) => setTimeout(r, 50));
      // Anything sent twice would have been recorded by now or show as a second arrival.
      await new Promise((r) => setTimeout(r, 200));
      for (const { name, worker } of instances) {
        await worker.stop();
        attempted.set(name, worker.stats.attempts.succeeded + worker.stats.attempts.failed);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    t.diagnostic(`${EVENTS} deliveries in ${seconds.toFixed(1)} s; attempts per worker: ${JSON.stringify(Object.fromEntries(attempted))}`);

    assert.equal(seen.size, EVENTS, 'every event delivered');
    assert.deepEqual([...new Set(seen.values())], [1], 'no attempt sent twice');
    assert.equal((attempted.get('a') ?? 0) + (attempted.get('b') ?? 0), EVENTS);
    assert.ok((attempted.get('a') ?? 0) > 0 && (attempted.get('b') ?? 0) > 0, 'both workers took part');
    const counts = await db
      .selectFrom('webhook_deliveries')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    assert.deepEqual(
      counts.map((c) => [c.status, Number(c.n)]),
      [['succeeded', EVENTS]],
    );
    const attempts = await db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(attempts.n), EVENTS);
    const pending = await db
      .selectFrom('event_queue')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(pending.n), 0);
  });
}

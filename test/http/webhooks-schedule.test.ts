import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/core/schedule.js';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../../src/webhooks/index.js';
import type { DeliveryWorker } from '../../src/workers/delivery-worker.js';
import { DATABASES } from '../support/harness.js';
import { at, receiver, setup, type Ctx, type Json } from './webhooks-delivery-support.js';

const MINUTE = 60_000;

/** A delivery worker with the settings a deployment runs with (only the clock is the test's). */
const deploymentWorker = (c: Ctx): DeliveryWorker => c.newWorker({ timeoutMs: DEFAULT_ATTEMPT_TIMEOUT_MS });

/** Runs passes at the current time until one attempts nothing; the attempts made. */
async function drain(worker: DeliveryWorker): Promise<number> {
  let attempted = 0;
  for (;;) {
    const report = await worker.runOnce();
    if (report.attempted === 0 && report.dispatched === 0) return attempted;
    attempted += report.attempted;
  }
}

for (const database of DATABASES) {
  describe(`webhook retry schedule on ${database.name}`, () => {
    test('every retry of every endpoint is due exactly at its offset, never before, and nothing is dead before +24 h', async (t) => {
      const c = await setup(t, database);
      const worker = deploymentWorker(c);
      const down = await receiver(t, c.clock, (_req, res) => res.writeHead(503).end());
      const endpoints = 8;
      for (let i = 0; i < endpoints; i++) await c.endpoint(down.url);
      await c.emit();
      const t0 = c.clock.now().getTime();
      assert.equal(await drain(worker), 2 * endpoints, 'the first attempt and the retry at once');
      for (const offset of RETRY_SCHEDULE_MS.slice(2)) {
        assert.equal((await at(c, t0, offset - 1, worker)).attempted, 0, `nothing 1 ms before +${offset} ms`);
        if (offset === RETRY_SCHEDULE_MS.at(-1)) assert.equal((await c.deliveries('?status=dead')).length, 0, 'nothing dead before +24 h');
        assert.equal((await at(c, t0, offset, worker)).attempted, endpoints, `every endpoint at +${offset} ms`);
      }
      const dead = await c.deliveries('?status=dead');
      assert.equal(dead.length, endpoints);
      for (const delivery of dead) {
        assert.deepEqual(
          delivery.attempts.map((a: Json) => Date.parse(a.attempted_at) - t0),
          [...RETRY_SCHEDULE_MS],
        );
      }
    });

    test('the offsets count from the first attempt made, not from when the delivery was created', async (t) => {
      const c = await setup(t, database);
      // One attempt at a time to the endpoint: the second event's delivery waits for the first's.
      const worker = c.newWorker({ perEndpointConcurrency: 1 });
      const down = await receiver(t, c.clock, (_req, res) => res.writeHead(503).end());
      await c.endpoint(down.url);
      await c.emit();
      await c.emit();
      const t0 = c.clock.now().getTime();
      assert.equal((await worker.runOnce()).attempted, 1);
      const waiting = (await c.deliveries()).find((d: Json) => d.attempts.length === 0);
      assert.ok(waiting !== undefined, 'one delivery waits for the slot');

      // Ten minutes later the slot is free again: the waiting delivery's first attempt, and its retry at once.
      c.clock.set(t0 + 10 * MINUTE);
      await drain(worker);
      const attemptsOf = async () => {
        const delivery = (await c.deliveries()).find((d: Json) => d.id === waiting.id);
        return delivery?.attempts.map((a: Json) => Date.parse(a.attempted_at) - t0);
      };
      assert.deepEqual(await attemptsOf(), [10 * MINUTE, 10 * MINUTE]);
      assert.equal((await at(c, t0, 10 * MINUTE + 30_000 - 1, worker)).attempted, 0, 'the +30 s retry is 30 s after its first attempt');
      assert.equal((await at(c, t0, 10 * MINUTE + 30_000, worker)).attempted, 1);
      assert.deepEqual(await attemptsOf(), [10 * MINUTE, 10 * MINUTE, 10 * MINUTE + 30_000]);
    });
  });
}

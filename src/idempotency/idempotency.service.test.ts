import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { canonicalize } from '@cauri/verifier';
import type { Kysely } from 'kysely';
import { DATABASES, openSharedStorages, openTestStorage } from '../../test/support/harness.js';
import { recordEvent } from '../events/event.service.js';
import { ManualClock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import type { Database } from '../storage/schema.js';
import { insertRecord } from './idempotency.repository.js';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, IdempotencyService } from './idempotency.service.js';

const serialize = (r: { body: unknown }) => JSON.stringify(r.body);
const hasRule = (rule: string) => (e: unknown) => e instanceof ApiError && e.code === 'validation_error' && e.details?.[0]?.rule === rule && e.details[0].field === 'Idempotency-Key';

async function countEvents(db: Kysely<Database>): Promise<number> {
  return Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/** A unit of work that creates a resource the way every endpoint does: an event row in the transaction. */
function createThing(clock: ManualClock, onRun?: () => Promise<void>) {
  let runs = 0;
  const work = async (trx: Kysely<Database>) => {
    runs++;
    const event = await recordEvent(trx, { clientId: null, type: 'webhook.test', data: { n: runs }, livemode: false, at: clock.now() });
    await onRun?.();
    return { status: 201, body: { id: event.id, n: runs } };
  };
  return { work, runs: () => runs };
}

for (const database of DATABASES) {
  describe(`idempotency on ${database.name}`, () => {
    test('a retry with the same key and body replays the first response and creates nothing', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      const thing = createThing(clock);
      const key = randomUUID();
      const first = await service.run({ clientId: 'cli_a', key, fingerprint: { body: { a: 1, b: [1, 2] } } }, serialize, thing.work);
      assert.equal(first.replayed, false);
      assert.equal(first.status, 201);
      // Same body with members in another order is the same request (canonical comparison).
      const again = await service.run({ clientId: 'cli_a', key: key.toUpperCase(), fingerprint: { body: { b: [1, 2], a: 1 } } }, serialize, thing.work);
      assert.deepEqual(again, { status: first.status, body: first.body, replayed: true });
      assert.equal(thing.runs(), 1);
      assert.equal(await countEvents(db), 1);
      // Keys belong to clients: another client's identical key is a new request.
      await service.run({ clientId: 'cli_b', key, fingerprint: { body: { a: 1, b: [1, 2] } } }, serialize, thing.work);
      assert.equal(thing.runs(), 2);
    });

    test('the same key with another body is 422 idempotency_key_reused; missing or malformed keys are 422', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      const thing = createThing(clock);
      const key = randomUUID();
      await service.run({ clientId: 'cli_a', key, fingerprint: { body: { qty: 1 } } }, serialize, thing.work);
      await assert.rejects(service.run({ clientId: 'cli_a', key, fingerprint: { body: { qty: 2 } } }, serialize, thing.work), hasRule('idempotency_key_reused'));
      await assert.rejects(service.run({ clientId: 'cli_a', key: undefined, fingerprint: {} }, serialize, thing.work), hasRule('required'));
      await assert.rejects(service.run({ clientId: 'cli_a', key: 'not-a-uuid', fingerprint: {} }, serialize, thing.work), hasRule('format'));
      assert.equal(thing.runs(), 1);
    });

    test('a failure after the resource is written leaves no resource, no event and no record', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      let fail = true;
      const thing = createThing(clock, async () => {
        if (fail) throw new Error('disk full after the insert');
      });
      const key = randomUUID();
      await assert.rejects(service.run({ clientId: 'cli_a', key, fingerprint: { x: 1 } }, serialize, thing.work), /disk full/);
      assert.equal(await countEvents(db), 0);
      assert.equal((await db.selectFrom('idempotency_keys').selectAll().execute()).length, 0);
      fail = false;
      const retry = await service.run({ clientId: 'cli_a', key, fingerprint: { x: 1 } }, serialize, thing.work);
      assert.equal(retry.replayed, false, 'the retry runs again');
      assert.equal(await countEvents(db), 1);
    });

    test('the same key while the first request is in flight is 409; a crashed holder’s lease lapses', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      // A request holding the key (its process may since have died): in flight until its lease lapses.
      const key = randomUUID();
      const now = clock.now().getTime();
      const requestHash = createHash('sha256').update(canonicalize({})).digest('hex');
      await insertRecord(db, { client_id: 'cli_a', key, request_hash: requestHash, state: 'in_flight', locked_until: now + IDEMPOTENCY_LEASE_MS, response_status: null, response_body: null, created_at: now, expires_at: now + IDEMPOTENCY_TTL_MS });
      const thing = createThing(clock);
      await assert.rejects(
        service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work),
        (e: unknown) => e instanceof ApiError && e.code === 'conflict' && e.headers?.['retry-after'] === '1',
      );
      clock.advance(IDEMPOTENCY_LEASE_MS);
      const taken = await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work);
      assert.equal(taken.replayed, false);
      assert.equal(thing.runs(), 1);
    });

    if (database.name === 'postgres') {
      test('a second request while the first is running in another connection gets 409', async (t) => {
        const storage = await openTestStorage(t, database);
      const { db } = storage;
        const clock = new ManualClock();
        const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const slow = createThing(clock, () => gate);
        const key = randomUUID();
        const first = service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work);
        await new Promise((r) => setTimeout(r, 50));
        await assert.rejects(service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work), (e: unknown) => e instanceof ApiError && e.code === 'conflict');
        release();
        assert.equal((await first).replayed, false);
        assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work)).replayed, true);
        assert.equal(slow.runs(), 1);
      });
    }

    test('two processes sharing the database: one request with the key runs, the other answers with its outcome or 409', async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const clock = new ManualClock();
      const a = new IdempotencyService(first.db, first.transact, clock, first.dialect);
      const b = new IdempotencyService(second.db, second.transact, clock, second.dialect);
      const thing = createThing(clock, () => new Promise((r) => setTimeout(r, 20)));
      const key = randomUUID();
      const results = await Promise.allSettled([a, b, a, b].map((service) => service.run({ clientId: 'cli_a', key, fingerprint: { qty: 5 } }, serialize, thing.work)));
      const created = results.filter((r) => r.status === 'fulfilled' && !r.value.replayed);
      assert.equal(created.length, 1, JSON.stringify(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as ApiError).code))));
      for (const r of results) {
        if (r.status === 'rejected') assert.equal((r.reason as ApiError).code, 'conflict');
        else if (r.value.replayed) assert.equal(r.value.body, (created[0] as PromiseFulfilledResult<{ body: string }>).value.body);
      }
      assert.equal(thing.runs(), 1);
      assert.equal(await countEvents(first.db), 1);
    });

    test('after 24 hours a key is forgotten', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      const thing = createThing(clock);
      const key = randomUUID();
      await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work);
      clock.advance(IDEMPOTENCY_TTL_MS - 1);
      assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work)).replayed, true);
      clock.advance(1);
      assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: { other: true } }, serialize, thing.work)).replayed, false);
      assert.equal(thing.runs(), 2);
    });

    test('50 concurrent identical requests with one key create exactly one resource', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect);
      const thing = createThing(clock, () => new Promise((r) => setTimeout(r, 5)));
      const key = randomUUID();
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => service.run({ clientId: 'cli_a', key, fingerprint: { qty: 5 } }, serialize, thing.work)));
      const created = results.filter((r) => r.status === 'fulfilled' && !r.value.replayed);
      const others = results.filter((r) => r.status === 'rejected' || r.value.replayed);
      assert.equal(created.length, 1);
      assert.equal(others.length, 49);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as ApiError).code, 'conflict');
      assert.equal(thing.runs(), 1);
      assert.equal(await countEvents(db), 1);
    });
  });
}

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
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
const hasRule = (rule: string) => (e: unknown) =>
  e instanceof ApiError && e.code === 'validation_error' && e.details?.[0]?.rule === rule && e.details[0].field === 'Idempotency-Key';

async function countEvents(db: Kysely<Database>): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
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
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock);
      const key = randomUUID();
      const first = await service.run({ clientId: 'cli_a', key, fingerprint: { body: { a: 1, b: [1, 2] } } }, serialize, thing.work);
      assert.equal(first.replayed, false);
      assert.equal(first.status, 201);
      // Same body with members in another order is the same request (canonical comparison).
      const again = await service.run(
        { clientId: 'cli_a', key: key.toUpperCase(), fingerprint: { body: { b: [1, 2], a: 1 } } },
        serialize,
        thing.work,
      );
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
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock);
      const key = randomUUID();
      await service.run({ clientId: 'cli_a', key, fingerprint: { body: { qty: 1 } } }, serialize, thing.work);
      await assert.rejects(
        service.run({ clientId: 'cli_a', key, fingerprint: { body: { qty: 2 } } }, serialize, thing.work),
        hasRule('idempotency_key_reused'),
      );
      await assert.rejects(service.run({ clientId: 'cli_a', key: undefined, fingerprint: {} }, serialize, thing.work), hasRule('required'));
      await assert.rejects(
        service.run({ clientId: 'cli_a', key: 'not-a-uuid', fingerprint: {} }, serialize, thing.work),
        hasRule('format'),
      );
      assert.equal(thing.runs(), 1);
    });

    test('a failure after the resource is written leaves no resource, no event and no record', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
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
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      // A request holding the key (its process may since have died): in flight until its lease lapses.
      const key = randomUUID();
      const now = clock.now().getTime();
      const requestHash = createHash('sha256').update(canonicalize({})).digest('hex');
      await insertRecord(db, {
        client_id: 'cli_a',
        key,
        request_hash: requestHash,
        state: 'in_flight',
        locked_until: now + IDEMPOTENCY_LEASE_MS,
        response_status: null,
        response_body: null,
        created_at: now,
        expires_at: now + IDEMPOTENCY_TTL_MS,
      });
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
        const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const slow = createThing(clock, () => gate);
        const key = randomUUID();
        const first = service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work);
        await new Promise((r) => setTimeout(r, 50));
        await assert.rejects(
          service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work),
          (e: unknown) => e instanceof ApiError && e.code === 'conflict',
        );
        release();
        assert.equal((await first).replayed, false);
        assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, slow.work)).replayed, true);
        assert.equal(slow.runs(), 1);
      });
    }

    test('two processes sharing the database: one request with the key runs, the other answers with its outcome or 409', async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const clock = new ManualClock();
      const a = new IdempotencyService(first.db, first.transact, clock, first.dialect, randomBytes(32));
      const b = new IdempotencyService(second.db, second.transact, clock, second.dialect, randomBytes(32));
      const thing = createThing(clock, () => new Promise((r) => setTimeout(r, 20)));
      const key = randomUUID();
      const results = await Promise.allSettled(
        [a, b, a, b].map((service) => service.run({ clientId: 'cli_a', key, fingerprint: { qty: 5 } }, serialize, thing.work)),
      );
      const created = results.filter((r) => r.status === 'fulfilled' && !r.value.replayed);
      assert.equal(
        created.length,
        1,
        JSON.stringify(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as ApiError).code))),
      );
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
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock);
      const key = randomUUID();
      await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work);
      clock.advance(IDEMPOTENCY_TTL_MS - 1);
      assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work)).replayed, true);
      clock.advance(1);
      assert.equal((await service.run({ clientId: 'cli_a', key, fingerprint: { other: true } }, serialize, thing.work)).replayed, false);
      assert.equal(thing.runs(), 2);
    });

    test('with a follow-up, the key stays in flight (409) until the final response is stored, and a replay returns exactly it', async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const clock = new ManualClock();
      const secretKey = randomBytes(32);
      const a = new IdempotencyService(first.db, first.transact, clock, first.dialect, secretKey);
      const b = new IdempotencyService(second.db, second.transact, clock, second.dialect, secretKey);
      const thing = createThing(clock);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inFollowUp = new Promise<void>((resolve) => (entered = resolve));
      const key = randomUUID();
      const running = a.run({ clientId: 'cli_a', key, fingerprint: { qty: 1 } }, serialize, thing.work, async (result, rewrite) => {
        entered();
        await gate;
        await first.transact((trx) => rewrite(trx, { ...(result.body as object), status: 'routed' }));
      });
      await inFollowUp;
      // The work has committed; the same process and another one sharing the database both refuse.
      const conflict = (e: unknown) => e instanceof ApiError && e.code === 'conflict' && e.headers?.['retry-after'] === '1';
      await assert.rejects(a.run({ clientId: 'cli_a', key, fingerprint: { qty: 1 } }, serialize, thing.work), conflict);
      await assert.rejects(b.run({ clientId: 'cli_a', key, fingerprint: { qty: 1 } }, serialize, thing.work), conflict);
      release();
      const answered = await running;
      assert.equal(JSON.parse(answered.body).status, 'routed');
      for (const service of [a, b]) {
        assert.deepEqual(await service.run({ clientId: 'cli_a', key, fingerprint: { qty: 1 } }, serialize, thing.work), {
          status: 201,
          body: answered.body,
          replayed: true,
        });
      }
      assert.equal(thing.runs(), 1);
    });

    test('a follow-up may replace the status too (202 answered 200 once the partner answered): sent, stored and replayed', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock();
      const service = new IdempotencyService(storage.db, storage.transact, clock, storage.dialect, randomBytes(32));
      const key = randomUUID();
      const work = async () => ({ status: 202, body: { pending: true } });
      const answered = await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, work, async (_result, rewrite) => {
        await storage.transact((trx) => rewrite(trx, { pending: false }, 200));
      });
      assert.deepEqual([answered.status, JSON.parse(answered.body)], [200, { pending: false }]);
      assert.deepEqual(await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, work), {
        status: 200,
        body: answered.body,
        replayed: true,
      });
      // Without a status the first one stays.
      const other = randomUUID();
      const kept = await service.run({ clientId: 'cli_a', key: other, fingerprint: {} }, serialize, work, async (_result, rewrite) => {
        await storage.transact((trx) => rewrite(trx, { pending: 'still' }));
      });
      assert.deepEqual([kept.status, JSON.parse(kept.body)], [202, { pending: 'still' }]);
      assert.deepEqual(await service.run({ clientId: 'cli_a', key: other, fingerprint: {} }, serialize, work), {
        status: 202,
        body: kept.body,
        replayed: true,
      });
    });

    test('a follow-up that fails after the commit: the committed response is sent, stored and replayed', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock();
      const service = new IdempotencyService(storage.db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock);
      const key = randomUUID();
      const answered = await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work, async (_result, rewrite) => {
        // The rewrite's transaction rolls back: its body must not be what is answered.
        await storage.transact(async (trx) => {
          await rewrite(trx, { rewritten: true });
          throw new Error('partner answer could not be applied');
        });
      });
      assert.match(String(answered.followUpError), /could not be applied/);
      assert.deepEqual(JSON.parse(answered.body), { id: JSON.parse(answered.body).id, n: 1 });
      const replay = await service.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work);
      assert.deepEqual(replay, { status: 201, body: answered.body, replayed: true });
      const row = await storage.db.selectFrom('idempotency_keys').selectAll().executeTakeFirstOrThrow();
      assert.equal(row.state, 'done');
    });

    test('a holder that died after its commit releases the key when its lease lapses; its late finish answers the same', async (t) => {
      const [first, second] = await openSharedStorages(t, database);
      const clock = new ManualClock();
      const secretKey = randomBytes(32);
      const a = new IdempotencyService(first.db, first.transact, clock, first.dialect, secretKey);
      const b = new IdempotencyService(second.db, second.transact, clock, second.dialect, secretKey);
      const thing = createThing(clock);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inFollowUp = new Promise<void>((resolve) => (entered = resolve));
      const key = randomUUID();
      // Stuck past its lease, as a process that died would be (from the other process's view).
      const stuck = a.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work, async (result, rewrite) => {
        entered();
        await gate;
        await first.transact((trx) => rewrite(trx, { ...(result.body as object), late: true }));
      });
      await inFollowUp;
      clock.advance(IDEMPOTENCY_LEASE_MS - 1);
      await assert.rejects(
        b.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work),
        (e: unknown) => e instanceof ApiError && e.code === 'conflict',
      );
      clock.advance(1);
      const settled = await b.run({ clientId: 'cli_a', key, fingerprint: {} }, serialize, thing.work);
      assert.equal(settled.replayed, true);
      assert.equal(JSON.parse(settled.body).late, undefined, 'the response committed with the work');
      release();
      assert.equal((await stuck).body, settled.body, 'the late holder answers what was settled');
      assert.equal(thing.runs(), 1);
    });

    test('a response that carries a secret is stored sealed, bound to its client and key, and replayed in clear', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      const secret = `whsec_${randomBytes(32).toString('base64url')}`;
      const work = async () => ({ status: 201, body: { id: 'we_1', secret } });
      const key = randomUUID();
      const first = await service.run({ clientId: 'cli_a', key, fingerprint: {}, sealResponse: true }, serialize, work);
      assert.equal(JSON.parse(first.body).secret, secret);
      const row = await db.selectFrom('idempotency_keys').selectAll().executeTakeFirstOrThrow();
      assert.doesNotMatch(JSON.stringify(row), new RegExp(secret));
      assert.match(row.response_body ?? '', /^v1\./);
      assert.deepEqual(await service.run({ clientId: 'cli_a', key, fingerprint: {}, sealResponse: true }, serialize, work), {
        ...first,
        replayed: true,
      });
      // Copied onto another client's record, the sealed body does not open.
      const other = randomUUID();
      await insertRecord(db, { ...row, client_id: 'cli_b', key: other });
      await assert.rejects(
        service.run({ clientId: 'cli_b', key: other, fingerprint: {} }, serialize, work),
        /unable to authenticate|auth/i,
      );
    });

    test('a fingerprint holding a lone surrogate is a 422 naming it, never an unhandled error; nothing is stored', async (t) => {
      const storage = await openTestStorage(t, database);
      const clock = new ManualClock();
      const service = new IdempotencyService(storage.db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock);
      const key = randomUUID();
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          service.run({ clientId: 'cli_a', key, fingerprint: { body: { note: 'x\udfff' } } }, serialize, thing.work),
          (e: unknown) =>
            e instanceof ApiError &&
            e.code === 'validation_error' &&
            e.details?.[0]?.rule === 'unicode' &&
            e.details[0].field === 'body.note',
        );
      }
      assert.equal(thing.runs(), 0);
      assert.equal((await storage.db.selectFrom('idempotency_keys').selectAll().execute()).length, 0);
    });

    test('50 concurrent identical requests with one key create exactly one resource', async (t) => {
      const storage = await openTestStorage(t, database);
      const { db } = storage;
      const clock = new ManualClock();
      const service = new IdempotencyService(db, storage.transact, clock, storage.dialect, randomBytes(32));
      const thing = createThing(clock, () => new Promise((r) => setTimeout(r, 5)));
      const key = randomUUID();
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, () => service.run({ clientId: 'cli_a', key, fingerprint: { qty: 5 } }, serialize, thing.work)),
      );
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

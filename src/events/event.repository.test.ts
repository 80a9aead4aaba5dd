import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, type Kysely } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { newId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import { clientEvents, clientEventsQuery, insertEvent, type EventQuery } from './event.repository.js';
import type { EventRow } from './event.table.js';

const START = Date.UTC(2026, 10, 24, 9);
const TYPES = ['order.created', 'order.routed', 'kyc.attested'];

/** 480 events a millisecond apart: client A's, client B's and broadcast ones (client_id null), interleaved. */
async function seed(db: Kysely<Database>): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  for (let i = 0; i < 480; i++) {
    const at = START + i;
    const clientId = i % 8 === 0 ? null : i % 3 === 0 ? 'cli_b' : 'cli_a';
    rows.push({
      id: newId('event', at),
      client_id: clientId,
      type: TYPES[i % TYPES.length] as string,
      livemode: 0,
      created_at: at,
      data: `{"n":${i}}`,
      subject_ref: null,
      origin: null,
    });
  }
  await db.transaction().execute(async (trx) => {
    for (const row of rows) await insertEvent(trx, row, false);
  });
  return rows;
}

/** What a client sees, computed from the rows themselves. */
function expected(rows: readonly EventRow[], clientId: string, keep: (row: EventRow) => boolean, direction: 'asc' | 'desc'): string[] {
  const ids = rows.filter((r) => (r.client_id === clientId || r.client_id === null) && keep(r)).map((r) => r.id);
  ids.sort();
  return direction === 'asc' ? ids : ids.reverse();
}

/** Every page, following the last id of each, as the API's cursors do. */
async function walk(db: Kysely<Database>, clientId: string, direction: 'asc' | 'desc', limit: number, type?: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const last = out.at(-1);
    const refine = (query: EventQuery) => {
      let q = type === undefined ? query : query.where('type', '=', type);
      if (last !== undefined) q = q.where('id', direction === 'asc' ? '>' : '<', last);
      return q;
    };
    const page = await clientEvents(db, clientId, direction, limit, refine);
    assert.ok(page.length <= limit);
    out.push(...page.map((r) => r.id));
    if (page.length < limit) return out;
  }
}

for (const database of DATABASES) {
  describe(`a client's events on ${database.name}`, () => {
    test('an event is stored whole, queued for the fan-out or not; on PostgreSQL the queue entry costs no statement of its own', async (t) => {
      const storage = await openTestStorage(t, database);
      const row = (i: number, origin: string | null): EventRow => ({
        id: newId('event', START + i),
        client_id: 'cli_a',
        type: 'order.created',
        livemode: 1,
        created_at: START + i,
        data: `{"n":${i}}`,
        subject_ref: `ord_${i}`,
        origin,
      });
      const rows = [row(1, '{"request_id":"req_1"}'), row(2, null), row(3, null)];
      const sent: number[] = [];
      for (const [i, r] of rows.entries()) {
        await storage.transact(async (trx) => {
          const before = storage.wireStats()?.statements ?? 0;
          await insertEvent(trx, r, i !== 2);
          sent.push((storage.wireStats()?.statements ?? 0) - before);
        });
      }
      const stored = await storage.db.selectFrom('events').selectAll().orderBy('id').execute();
      assert.deepEqual(
        stored.map((e) => ({ ...e, livemode: Number(e.livemode), created_at: Number(e.created_at) })),
        rows,
      );
      const queued = await storage.db.selectFrom('event_queue').select('event_id').orderBy('event_id').execute();
      assert.deepEqual(
        queued.map((q) => q.event_id),
        [rows[0]?.id, rows[1]?.id],
      );
      if (storage.wireStats() !== null) assert.deepEqual(sent, [sent[2], sent[2], sent[2]], `statements sent: ${sent.join(', ')}`);
    });

    test('its own and the broadcast ones, merged in id order, page after page, in both directions and with a filter', async (t) => {
      const { db } = await openTestStorage(t, database);
      const rows = await seed(db);
      for (const direction of ['asc', 'desc'] as const) {
        for (const limit of [1, 7, 50, 1000]) {
          assert.deepEqual(
            await walk(db, 'cli_a', direction, limit),
            expected(rows, 'cli_a', () => true, direction),
            `cli_a ${direction} ${limit}`,
          );
        }
        assert.deepEqual(
          await walk(db, 'cli_b', direction, 11, 'kyc.attested'),
          expected(rows, 'cli_b', (r) => r.type === 'kyc.attested', direction),
        );
        // A client with no events of its own still sees the broadcast ones.
        assert.deepEqual(
          await walk(db, 'cli_c', direction, 9),
          expected(rows, 'cli_c', () => true, direction),
        );
      }
      // A window (the event stream's read): after < id <= upTo, oldest first.
      const ids = expected(rows, 'cli_a', () => true, 'asc');
      const [after, upTo] = [ids[40] as string, ids[90] as string];
      const window = await clientEvents(db, 'cli_a', 'asc', 500, (q) => q.where('id', '>', after).where('id', '<=', upTo));
      assert.deepEqual(
        window.map((r) => r.id),
        ids.slice(41, 91),
      );
      assert.equal(window[0]?.data, rows.find((r) => r.id === ids[41])?.data, 'whole rows');
    });

    if (database.name === 'sqlite') {
      test('a page reads each of the two index ranges in order, never every event of the client', async (t) => {
        const { db } = await openTestStorage(t, database);
        await seed(db);
        const compiled = clientEventsQuery(db, 'cli_a', 'desc', 11, (q) => q.where('id', '<', newId('event', START + 400))).compile();
        const plan = (
          await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]))
        ).rows.map((r) => r.detail);
        assert.equal(
          plan.filter((d) => /SEARCH events USING INDEX events_client_id \(client_id=\? AND id<\?\)/.test(d)).length,
          2,
          plan.join('\n'),
        );
        assert.ok(!plan.some((d) => d.includes('MULTI-INDEX OR')), plan.join('\n'));
      });
    }
  });
}

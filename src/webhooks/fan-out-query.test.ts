import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { rowsReadOnPostgres, sqlitePlan } from '../../test/support/query-plans.js';
import { newId } from '../lib/ids.js';
import type { EventTable } from '../events/event.table.js';
import { lockPendingEvents, pendingEventsQuery } from './delivery.repository.js';

const EVENTS = 20_000;
const STILL_QUEUED = 5;
const CHUNK = 1000;
const START = Date.UTC(2026, 10, 28, 9);

for (const database of DATABASES) {
  test(`the fan-out reads the queued events only, however many were fanned out before them (${database.name})`, async (t) => {
    const { db } = await openTestStorage(t, database);
    const events: EventTable[] = Array.from({ length: EVENTS }, (_, i) => ({
      id: newId('event', START + i),
      client_id: 'cli_fanout',
      type: 'order.created',
      livemode: 0,
      created_at: START + i,
      data: '{}',
      subject_ref: null,
    }));
    for (let i = 0; i < EVENTS; i += CHUNK) {
      const chunk = events.slice(i, i + CHUNK);
      await db.insertInto('events').values(chunk).execute();
      await db
        .insertInto('event_queue')
        .values(chunk.map((e) => ({ event_id: e.id })))
        .execute();
    }
    // The statistics are gathered while the whole backlog is queued, then the fan-out drains all but
    // the newest few: the moment a long-running deployment is in after a burst of orders.
    await sql`analyze`.execute(db);
    const remaining = events.slice(-STILL_QUEUED).map((e) => e.id);
    await db
      .deleteFrom('event_queue')
      .where('event_id', '<', remaining[0] as string)
      .execute();

    const postgres = database.name === 'postgres';
    await db.transaction().execute(async (trx) => {
      const taken = await lockPendingEvents(trx, postgres ? 'postgres' : 'sqlite', 100);
      assert.deepEqual(
        taken.map((e) => e.id),
        remaining,
        'the queued events, oldest first',
      );
    });

    const query = pendingEventsQuery(db, 100, postgres).compile();
    if (postgres) {
      await db.transaction().execute(async (trx) => {
        const { rows, plan } = await rowsReadOnPostgres(trx, query, 'events');
        assert.ok(rows <= STILL_QUEUED, `${rows} events read for ${STILL_QUEUED} queued: ${plan}`);
      });
    } else {
      const details = await sqlitePlan(db, query);
      assert.match(details, /SEARCH e USING INDEX/, details);
      assert.doesNotMatch(details, /SCAN e\b/, details);
    }
  });
}

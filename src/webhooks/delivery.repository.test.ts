import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { newId } from '../lib/ids.js';
import {
  clientDeliveriesQuery,
  countUnlisted,
  listClientDeliveries,
  markListed,
  type DeliveryFilter,
} from './delivery-listing.repository.js';
import { insertDeliveries } from './delivery.repository.js';
import type { DeliveryStatus, WebhookDeliveryRow } from './webhook.table.js';

const START = Date.UTC(2026, 10, 24, 9);

function delivery(i: number, clientId: string, endpointId: string, status: DeliveryStatus): WebhookDeliveryRow {
  const at = START + i;
  return {
    id: newId('delivery', at),
    event_id: newId('event', at),
    event_type: 'order.created',
    endpoint_id: endpointId,
    client_id: clientId,
    idempotency_key: randomUUID(),
    status,
    attempts: status === 'dead' ? 8 : 1,
    first_attempt_at: at,
    next_attempt_at: null,
    lease_until: null,
    lease_owner: null,
    last_attempt_at: at,
    created_at: at,
    updated_at: at,
    listed: 1,
  };
}

for (const database of DATABASES) {
  describe(`delivery listings on ${database.name}`, () => {
    test("a client's dead letters, overall and per endpoint, page after page, among many live deliveries", async (t) => {
      const { db } = await openTestStorage(t, database);
      const rows: WebhookDeliveryRow[] = [];
      for (let i = 0; i < 600; i++) {
        const clientId = i % 4 === 0 ? 'cli_b' : 'cli_a';
        const endpointId = `we_${clientId}_${i % 3}`;
        rows.push(delivery(i, clientId, endpointId, i % 23 === 0 ? 'dead' : i % 2 === 0 ? 'succeeded' : 'pending'));
      }
      await db.transaction().execute((trx) => insertDeliveries(trx, rows));
      const expected = (keep: (r: WebhookDeliveryRow) => boolean) =>
        rows
          .filter((r) => r.client_id === 'cli_a' && r.status === 'dead' && keep(r))
          .map((r) => r.id)
          .sort()
          .reverse();
      const walk = async (endpointId?: string) => {
        const ids: string[] = [];
        for (;;) {
          const before = ids.at(-1);
          const page = await listClientDeliveries(
            db,
            'cli_a',
            { status: 'dead', ...(endpointId === undefined ? {} : { endpointId }) },
            { limit: 4, ...(before === undefined ? {} : { before }) },
          );
          ids.push(...page.slice(0, 4).map((r) => r.id));
          if (page.length <= 4) return ids;
        }
      };
      assert.ok(expected(() => true).length > 10);
      assert.deepEqual(
        await walk(),
        expected(() => true),
      );
      assert.deepEqual(
        await walk('we_cli_a_1'),
        expected((r) => r.endpoint_id === 'we_cli_a_1'),
      );
      // Oldest first from a position, as the cursor towards newer pages reads them.
      const all = expected(() => true);
      const after = await listClientDeliveries(db, 'cli_a', { status: 'dead' }, { limit: 3, after: all[5] as string });
      assert.deepEqual(
        after.map((r) => r.id),
        all.slice(1, 5).reverse(),
      );
    });

    test("a client's deliveries, in its listing index or still waiting to be added, page after page in id order, with each filter", async (t) => {
      const { db } = await openTestStorage(t, database);
      const rows: WebhookDeliveryRow[] = [];
      for (let i = 0; i < 240; i++) {
        const clientId = i % 3 === 0 ? 'cli_b' : 'cli_a';
        const row = delivery(i, clientId, `we_${clientId}_${i % 2}`, i % 5 === 0 ? 'pending' : i % 17 === 0 ? 'dead' : 'succeeded');
        // The older deliveries listed, the newest waiting, with some of each kind on either side of the boundary.
        row.listed = i < 150 || i % 7 === 0 ? 1 : 0;
        rows.push(row);
      }
      await db.transaction().execute((trx) => insertDeliveries(trx, rows));
      const walk = async (filter: DeliveryFilter, limit: number) => {
        const ids: string[] = [];
        for (;;) {
          const before = ids.at(-1);
          const page = await listClientDeliveries(db, 'cli_a', filter, { limit, ...(before === undefined ? {} : { before }) });
          ids.push(...page.slice(0, limit).map((r) => r.id));
          if (page.length <= limit) return ids;
        }
      };
      const expected = (keep: (r: WebhookDeliveryRow) => boolean) =>
        rows
          .filter((r) => r.client_id === 'cli_a' && keep(r))
          .map((r) => r.id)
          .sort()
          .reverse();
      assert.ok(rows.some((r) => r.client_id === 'cli_a' && r.listed === 0 && r.status === 'dead'));
      assert.deepEqual(
        await walk({}, 7),
        expected(() => true),
      );
      assert.deepEqual(
        await walk({ endpointId: 'we_cli_a_1' }, 9),
        expected((r) => r.endpoint_id === 'we_cli_a_1'),
      );
      for (const status of ['pending', 'succeeded', 'dead'] as const)
        assert.deepEqual(
          await walk({ status }, 5),
          expected((r) => r.status === status),
          status,
        );
      const unlisted = rows.find((r) => r.client_id === 'cli_a' && r.listed === 0) as WebhookDeliveryRow;
      assert.deepEqual(await walk({ eventId: unlisted.event_id }, 5), [unlisted.id]);
      // Oldest first from a position on either side of the boundary, as the cursor towards newer pages reads them.
      const all = expected(() => true);
      for (const at of [10, 70, all.length - 3]) {
        const after = await listClientDeliveries(db, 'cli_a', {}, { limit: 6, after: all[at] as string });
        assert.deepEqual(
          after.map((r) => r.id),
          all.slice(Math.max(0, at - 7), at).reverse(),
        );
      }
      // Marking moves deliveries into the client index, oldest first, and changes no listing.
      assert.equal(await countUnlisted(db), rows.filter((r) => r.listed === 0).length);
      assert.equal(await db.transaction().execute((trx) => markListed(trx, 40)), 40);
      assert.equal(await countUnlisted(db), rows.filter((r) => r.listed === 0).length - 40);
      const oldestUnlisted = rows
        .filter((r) => r.listed === 0)
        .slice(0, 40)
        .map((r) => r.id);
      const marked = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', 'in', oldestUnlisted)
        .where('listed', '=', 1)
        .execute();
      assert.equal(marked.length, 40);
      assert.deepEqual(
        await walk({}, 7),
        expected(() => true),
      );
      assert.equal(await db.transaction().execute((trx) => markListed(trx, 1000)), rows.filter((r) => r.listed === 0).length - 40);
      assert.equal(await countUnlisted(db), 0);
      assert.deepEqual(
        await walk({}, 50),
        expected(() => true),
      );
    });

    if (database.name === 'sqlite') {
      test("a listing reads the client's listing index and the deliveries waiting to be added, each by index, never the whole table", async (t) => {
        const { db } = await openTestStorage(t, database);
        const explain = async (filter: DeliveryFilter, after?: string) => {
          const query = clientDeliveriesQuery(db, 'cli_a', filter, { limit: 20, ...(after === undefined ? {} : { after }) }).compile();
          const plan = await db.executeQuery<{ detail: string }>(
            CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
          );
          return plan.rows.map((r) => r.detail).join('\n');
        };
        for (const plan of [await explain({}), await explain({ endpointId: 'we_1' }), await explain({ status: 'pending' }, 'del_x')]) {
          assert.match(
            plan,
            /USING INDEX webhook_deliveries_client \(client_id=\? AND id[<>]\?\)|USING INDEX webhook_deliveries_client \(client_id=\?\)/,
            plan,
          );
          assert.match(plan, /USING INDEX webhook_deliveries_unlisted/, plan);
          assert.doesNotMatch(plan, /SCAN webhook_deliveries(?! USING)/, plan);
        }
        assert.match(await explain({ eventId: 'evt_1' }), /USING INDEX sqlite_autoindex_webhook_deliveries_2 \(event_id=\?\)/);
      });

      test('the dead-letter listing reads the partial index of dead letters, not every delivery of the client', async (t) => {
        const { db } = await openTestStorage(t, database);
        const explain = async (status: DeliveryStatus, endpointId?: string) => {
          const query = clientDeliveriesQuery(
            db,
            'cli_a',
            { status, ...(endpointId === undefined ? {} : { endpointId }) },
            { limit: 20 },
          ).compile();
          const plan = await db.executeQuery<{ detail: string }>(
            CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
          );
          return plan.rows.map((r) => r.detail).join('\n');
        };
        assert.match(await explain('dead'), /USING INDEX webhook_deliveries_dead_client \(client_id=\?\)/);
        assert.match(await explain('dead', 'we_1'), /USING INDEX webhook_deliveries_dead(_client)? /);
        assert.doesNotMatch(await explain('dead'), /TEMP B-TREE/);
      });
    }
  });
}

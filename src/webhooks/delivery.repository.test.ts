import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import { DATABASES, openTestStorage } from '../../test/support/harness.js';
import { newId } from '../lib/ids.js';
import { clientDeliveriesQuery, insertDeliveries, listClientDeliveries } from './delivery.repository.js';
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
  };
}

for (const database of DATABASES) {
  describe(`dead letters on ${database.name}`, () => {
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
          const page = await listClientDeliveries(db, 'cli_a', { status: 'dead', ...(endpointId === undefined ? {} : { endpointId }) }, { limit: 4, ...(before === undefined ? {} : { before }) });
          ids.push(...page.slice(0, 4).map((r) => r.id));
          if (page.length <= 4) return ids;
        }
      };
      assert.ok(expected(() => true).length > 10);
      assert.deepEqual(await walk(), expected(() => true));
      assert.deepEqual(await walk('we_cli_a_1'), expected((r) => r.endpoint_id === 'we_cli_a_1'));
      // Oldest first from a position, as the cursor towards newer pages reads them.
      const all = expected(() => true);
      const after = await listClientDeliveries(db, 'cli_a', { status: 'dead' }, { limit: 3, after: all[5] as string });
      assert.deepEqual(
        after.map((r) => r.id),
        all.slice(1, 5).reverse(),
      );
    });

    if (database.name === 'sqlite') {
      test('the dead-letter listing reads the partial index of dead letters, not every delivery of the client', async (t) => {
        const { db } = await openTestStorage(t, database);
        const explain = async (status: DeliveryStatus, endpointId?: string) => {
          const query = clientDeliveriesQuery(db, 'cli_a', { status, ...(endpointId === undefined ? {} : { endpointId }) }, { limit: 20 }).compile();
          const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
          return plan.rows.map((r) => r.detail).join('\n');
        };
        assert.match(await explain('dead'), /USING INDEX webhook_deliveries_dead_client \(client_id=\?\)/);
        assert.match(await explain('dead', 'we_1'), /USING INDEX webhook_deliveries_dead(_client)? /);
        assert.doesNotMatch(await explain('dead'), /TEMP B-TREE/);
      });
    }
  });
}

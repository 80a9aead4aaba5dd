import { sql, type Kysely, type RawBuilder } from 'kysely';
import { clientEvents, type EventQuery } from '../events/event.repository.js';
import type { EventRow } from '../events/event.table.js';
import type { Database } from '../storage/schema.js';
import type { PageRequest } from './endpoint.repository.js';
import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow } from './webhook.table.js';

// The client's side of deliveries: the listings (and the batched listing index the delivery worker
// fills on SQLite), a delivery's attempts, replays of dead letters, the cancellation of a deleted
// endpoint's deliveries, and the client's events. The delivery loop's queries are in delivery.repository.ts.

export interface DeliveryFilter {
  endpointId?: string;
  eventId?: string;
  status?: DeliveryStatus;
}

export async function listClientDeliveries(
  db: Kysely<Database>,
  clientId: string,
  filter: DeliveryFilter,
  page: PageRequest,
): Promise<WebhookDeliveryRow[]> {
  return clientDeliveriesQuery(db, clientId, filter, page).execute();
}

// The two halves of a client's deliveries (migration 2026-11-24T15-00): those in the client's
// listing index, and those the delivery worker has yet to add there, in a partial index by id.
const LISTED = sql<boolean>`listed = 1`;
const UNLISTED = sql<boolean>`listed = 0`;

/**
 * A page of the client's deliveries (one more than asked, to tell whether more follow), newest first
 * or, after a position, oldest first. The status is a literal, so that a listing of dead letters uses
 * their partial indexes, by client (`webhook_deliveries_dead_client`) or by endpoint
 * (`webhook_deliveries_dead`), and reads only dead letters rather than every delivery of the client;
 * those indexes, like the one by event, hold every delivery, listed or not. Any other listing reads
 * the client's listing index and the deliveries not yet in it, each range in order and cut at the
 * page's size, then merges the two.
 */
export function clientDeliveriesQuery(db: Kysely<Database>, clientId: string, filter: DeliveryFilter, page: PageRequest) {
  const direction = page.after === undefined ? 'desc' : 'asc';
  const range = (listed: RawBuilder<boolean> | null) => {
    let query = db.selectFrom('webhook_deliveries').selectAll().where('client_id', '=', clientId);
    if (listed !== null) query = query.where(listed);
    if (filter.endpointId !== undefined) query = query.where('endpoint_id', '=', filter.endpointId);
    if (filter.eventId !== undefined) query = query.where('event_id', '=', filter.eventId);
    if (filter.status !== undefined) query = query.where('status', '=', sql.lit(filter.status));
    if (page.after !== undefined) query = query.where('id', '>', page.after);
    if (page.before !== undefined) query = query.where('id', '<', page.before);
    return query.orderBy('id', direction).limit(page.limit + 1);
  };
  if (filter.status === 'dead' || filter.eventId !== undefined) return range(null);
  return db
    .selectFrom(range(LISTED).as('listed'))
    .selectAll()
    .unionAll(db.selectFrom(range(UNLISTED).as('unlisted')).selectAll())
    .orderBy('id', direction)
    .limit(page.limit + 1);
}

/** How many deliveries wait to be added to their clients' listing index. */
export async function countUnlisted(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(UNLISTED)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Adds up to `limit` deliveries, oldest first, to their clients' listing index; returns how many it added. */
export async function markListed(trx: Kysely<Database>, limit: number): Promise<number> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ listed: 1 })
    .where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where(UNLISTED).orderBy('id').limit(limit))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findClientDelivery(db: Kysely<Database>, clientId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('client_id', '=', clientId).executeTakeFirst();
}

export async function attemptsOf(db: Kysely<Database>, deliveryIds: readonly string[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('seq')
    .execute();
}

/** Makes dead deliveries due again at `now` (a replay); returns how many changed. */
export async function requeueDead(db: Kysely<Database>, where: { id?: string; endpointId?: string }, now: number): Promise<number> {
  let query = db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, lease_until: null, lease_owner: null, updated_at: now })
    .where('status', '=', sql.lit('dead'));
  if (where.id !== undefined) query = query.where('id', '=', where.id);
  if (where.endpointId !== undefined) query = query.where('endpoint_id', '=', where.endpointId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Stops every pending delivery of a deleted endpoint. */
export async function cancelPending(db: Kysely<Database>, endpointId: string, now: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

// ----- Events, as the client sees them ----------------------------------------------------------

/** Events of this client and those addressed to every client (client_id null), a page of them. */
export async function listClientEvents(
  db: Kysely<Database>,
  clientId: string,
  type: string | undefined,
  page: PageRequest,
): Promise<EventRow[]> {
  const ofType = (query: EventQuery) => (type === undefined ? query : query.where('type', '=', type));
  if (page.after !== undefined) {
    const after = page.after;
    return clientEvents(db, clientId, 'asc', page.limit + 1, (query) => ofType(query).where('id', '>', after));
  }
  const before = page.before;
  return clientEvents(db, clientId, 'desc', page.limit + 1, (query) =>
    before === undefined ? ofType(query) : ofType(query).where('id', '<', before),
  );
}

export async function findClientEvent(db: Kysely<Database>, clientId: string, id: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('client_id', '=', clientId), eb('client_id', 'is', null)]))
    .executeTakeFirst();
}

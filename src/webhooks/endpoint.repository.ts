import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { WebhookEndpointRow } from './webhook.table.js';

/** A keyset page, newest first: `before` continues towards older rows, `after` back towards newer ones. */
export interface PageRequest {
  limit: number;
  before?: string;
  after?: string;
}

export async function insertEndpoint(db: Kysely<Database>, row: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

/** A client's endpoint that has not been deleted. */
export async function findClientEndpoint(db: Kysely<Database>, clientId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function countClientEndpoints(db: Kysely<Database>, clientId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateEndpoint(db: Kysely<Database>, id: string, changes: Partial<WebhookEndpointRow>): Promise<void> {
  await db.updateTable('webhook_endpoints').set(changes).where('id', '=', id).execute();
}

/** One page of a client's endpoints (limit + 1 rows, to tell whether another page follows). */
export async function listClientEndpoints(db: Kysely<Database>, clientId: string, page: PageRequest): Promise<WebhookEndpointRow[]> {
  let query = db.selectFrom('webhook_endpoints').selectAll().where('client_id', '=', clientId).where('deleted_at', 'is', null);
  if (page.after !== undefined)
    return query
      .where('id', '>', page.after)
      .orderBy('id', 'asc')
      .limit(page.limit + 1)
      .execute();
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  return query
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/**
 * Enabled endpoints that may receive events of these clients (every client's when `allClients`),
 * created no later than `createdBy`: the candidates of one fan-out batch, whole, since the worker
 * may send to them at once.
 */
export async function subscribableEndpoints(
  db: Kysely<Database>,
  clientIds: readonly string[],
  allClients: boolean,
  createdBy: number,
): Promise<WebhookEndpointRow[]> {
  if (!allClients && clientIds.length === 0) return [];
  let query = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where('disabled', '=', 0)
    .where('created_at', '<=', createdBy);
  if (!allClients) query = query.where('client_id', 'in', clientIds);
  return query.execute();
}

export async function findEndpoints(db: Kysely<Database>, ids: readonly string[]): Promise<WebhookEndpointRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute();
}

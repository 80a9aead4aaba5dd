import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import { clientEvents } from '../events/event.repository.js';
import type { EventRow } from '../events/event.table.js';

/** The client's events (its own and those addressed to every client) with `after < id <= upTo`, in id order. */
export async function clientEventsBetween(
  db: Kysely<Database>,
  clientId: string,
  after: string,
  upTo: string,
  limit: number,
): Promise<EventRow[]> {
  return clientEvents(db, clientId, 'asc', limit, (query) => query.where('id', '>', after).where('id', '<=', upTo));
}

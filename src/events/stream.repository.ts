import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { EventRow } from './event.table.js';

/**
 * The client's events (its own and those addressed to every client) with `after < id <= upTo`, in id
 * order. Both branches of the OR are ranges of the `events_client_id (client_id, id)` index.
 */
export async function clientEventsBetween(db: Kysely<Database>, clientId: string, after: string, upTo: string, limit: number): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where((eb) => eb.or([eb('client_id', '=', clientId), eb('client_id', 'is', null)]))
    .where('id', '>', after)
    .where('id', '<=', upTo)
    .orderBy('id')
    .limit(limit)
    .execute();
}

import type { Kysely } from 'kysely';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { EventRow } from '../events/event.table.js';

/**
 * The client's event (its own or one addressed to every client), locked on PostgreSQL until the
 * caller's transaction ends, so that two resends of one event do not both create its delivery to an
 * endpoint (SQLite's write transaction already excludes every other writer).
 */
export async function lockClientEvent(
  trx: Kysely<Database>,
  dialect: DialectName,
  clientId: string,
  id: string,
): Promise<EventRow | undefined> {
  const query = trx
    .selectFrom('events')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('client_id', '=', clientId), eb('client_id', 'is', null)]));
  return dialectOf(dialect).rowLocked({ locking: query.forUpdate(), plain: query }).executeTakeFirst();
}

/**
 * Makes a settled delivery (succeeded or dead) due again at `now`, with its retry schedule restarted
 * from `now`: it keeps its id, its idempotency key and its attempts so far, and gets the attempts of
 * the schedule it has not used, at least one. Returns whether it changed.
 */
export async function requeueSettled(trx: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', first_attempt_at: now, next_attempt_at: now, lease_until: null, lease_owner: null, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['succeeded', 'dead'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

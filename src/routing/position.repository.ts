import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';

/**
 * Takes (or renews) the lease on a connector's report log for `owner`; false when another process
 * holds an unexpired lease. Only the holder reads the log, so reports are applied in order.
 */
export async function leaseConnector(
  db: Kysely<Database>,
  connector: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<{ position: string | null } | null> {
  await db
    .insertInto('connector_positions')
    .values({ connector, position: null, lease_owner: null, lease_until: 0 })
    .onConflict((oc) => oc.column('connector').doNothing())
    .execute();
  const result = await db
    .updateTable('connector_positions')
    .set({ lease_owner: owner, lease_until: now + leaseMs })
    .where('connector', '=', connector)
    .where((eb) => eb.or([eb('lease_until', '<=', now), eb('lease_owner', '=', owner)]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return null;
  const row = await db.selectFrom('connector_positions').select('position').where('connector', '=', connector).executeTakeFirstOrThrow();
  return { position: row.position };
}

export async function savePosition(db: Kysely<Database>, connector: string, owner: string, position: string | null): Promise<void> {
  await db
    .updateTable('connector_positions')
    .set({ position })
    .where('connector', '=', connector)
    .where('lease_owner', '=', owner)
    .execute();
}

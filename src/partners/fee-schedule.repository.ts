import type { Kysely } from 'kysely';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { FeeScheduleRow, FeeScope } from './fee-schedule.table.js';

const inForce = new PreparedQuery(3, (qb, scope: string, owner: string, tradeDate: string) =>
  qb
    .selectFrom('fee_schedules')
    .select(['scope', 'owner', 'effective_from', 'content'])
    .where('scope', '=', scope as FeeScope)
    .where('owner', '=', owner)
    .where('effective_from', '<=', tradeDate)
    .orderBy('effective_from', 'desc')
    .limit(1),
);

/** A version in force, as fills are priced with it: its key and its content (JSON). */
export type ScheduleInForce = Pick<FeeScheduleRow, 'scope' | 'owner' | 'effective_from' | 'content'>;

/** The version in force on `tradeDate`: the latest whose effective_from is on or before it. */
export async function findScheduleInForce(
  db: Kysely<Database>,
  scope: FeeScope,
  owner: string,
  tradeDate: string,
): Promise<ScheduleInForce | undefined> {
  return inForce.first(db, scope, owner, tradeDate);
}

export async function findScheduleVersion(
  db: Kysely<Database>,
  scope: FeeScope,
  owner: string,
  effectiveFrom: string,
): Promise<FeeScheduleRow | undefined> {
  return db
    .selectFrom('fee_schedules')
    .selectAll()
    .where('scope', '=', scope)
    .where('owner', '=', owner)
    .where('effective_from', '=', effectiveFrom)
    .executeTakeFirst();
}

export async function listSchedules(db: Kysely<Database>, filter: { scope?: FeeScope; owner?: string } = {}): Promise<FeeScheduleRow[]> {
  let query = db.selectFrom('fee_schedules').selectAll();
  if (filter.scope !== undefined) query = query.where('scope', '=', filter.scope);
  if (filter.owner !== undefined) query = query.where('owner', '=', filter.owner);
  return query.orderBy('scope').orderBy('owner').orderBy('effective_from').execute();
}

let writes = 0;

/**
 * Counts this process's writes of fee schedules, before and after each: a copy of a version read
 * while the count stayed the same is still what the database holds for this process (a
 * transaction may keep what it read until then; see fill-pricing.ts).
 */
export function scheduleWrites(): number {
  return writes;
}

async function counted(write: () => Promise<unknown>): Promise<void> {
  writes++;
  try {
    await write();
  } finally {
    writes++;
  }
}

/** Writes a version, replacing the one of the same scope, owner and date. */
export async function upsertSchedule(db: Kysely<Database>, row: FeeScheduleRow): Promise<void> {
  const { scope: _scope, owner: _owner, effective_from: _from, ...changes } = row;
  await counted(() =>
    db
      .insertInto('fee_schedules')
      .values(row)
      .onConflict((oc) => oc.columns(['scope', 'owner', 'effective_from']).doUpdateSet(changes))
      .execute(),
  );
}

/** Writes a version where none of that date exists (processes starting together may race to it). */
export async function insertScheduleIfAbsent(db: Kysely<Database>, row: FeeScheduleRow): Promise<void> {
  await counted(() =>
    db
      .insertInto('fee_schedules')
      .values(row)
      .onConflict((oc) => oc.columns(['scope', 'owner', 'effective_from']).doNothing())
      .execute(),
  );
}

/** Replaces a version that came from shipped data; an imported one is left alone. */
export async function replaceShippedSchedule(db: Kysely<Database>, row: FeeScheduleRow): Promise<void> {
  const { scope, owner, effective_from, ...changes } = row;
  await counted(() =>
    db
      .updateTable('fee_schedules')
      .set(changes)
      .where('scope', '=', scope)
      .where('owner', '=', owner)
      .where('effective_from', '=', effective_from)
      .where('origin', '=', 'shipped')
      .execute(),
  );
}

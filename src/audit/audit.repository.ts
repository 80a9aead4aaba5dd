import { sql, type Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { AuditChunkTable, AuditSnapshotRow } from './audit.table.js';

/** The order columns a leaf is made of (docs/audit.md). */
export const LEAF_COLUMNS = [
  'id',
  'rcpt_to',
  'kyc_attestation_id',
  'kyc_attestation_sha256',
  'instrument',
  'side',
  'qty',
  'limit_price_cents',
  'created_at',
] as const;

export async function findSnapshot(db: Kysely<Database>, date: string): Promise<AuditSnapshotRow | undefined> {
  return db.selectFrom('audit_snapshots').selectAll().where('date', '=', date).executeTakeFirst();
}

/** The date of the latest snapshot row (in any state), or undefined when there is none. */
export async function latestSnapshotDate(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db.selectFrom('audit_snapshots').select('date').orderBy('date', 'desc').limit(1).executeTakeFirst();
  return row?.date;
}

export async function earliestSnapshotDate(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db.selectFrom('audit_snapshots').select('date').orderBy('date', 'asc').limit(1).executeTakeFirst();
  return row?.date;
}

/** created_at of the first order ever (orders_created_at index), or undefined. */
export async function firstOrderCreatedAt(db: Kysely<Database>): Promise<number | undefined> {
  const row = await db.selectFrom('orders').select('created_at').orderBy('created_at', 'asc').limit(1).executeTakeFirst();
  return row?.created_at;
}

/**
 * Takes the build lease of `date`: creates the row (state building) or, when a builder's lease has
 * run out, takes it over. Starts with a write so that on SQLite the transaction holds the writer
 * lock before it reads. Returns the row as it stands afterwards; the caller owns the build only if
 * it is `building` with `lease_owner = owner`.
 */
export async function claimBuild(
  trx: Kysely<Database>,
  date: string,
  owner: string,
  now: number,
  leaseUntil: number,
): Promise<AuditSnapshotRow> {
  await trx
    .insertInto('audit_snapshots')
    .values({
      date,
      state: 'building',
      lease_owner: owner,
      lease_until: leaseUntil,
      merkle_root: null,
      count: null,
      previous_merkle_root: null,
      chunk_size: null,
      chunk_roots: null,
      built_at: null,
      anchor_chain: null,
      anchor_tx_hash: null,
      anchor_block_height: null,
      anchor_attempts: 0,
      anchor_error: null,
      next_anchor_at: null,
      anchored_at: null,
      key_id: null,
      signature: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('date').doNothing())
    .execute();
  await trx
    .updateTable('audit_snapshots')
    .set({ lease_owner: owner, lease_until: leaseUntil, updated_at: now })
    .where('date', '=', date)
    .where('state', '=', 'building')
    .where((eb) => eb.or([eb('lease_owner', '=', owner), eb('lease_until', '<=', now)]))
    .execute();
  return trx.selectFrom('audit_snapshots').selectAll().where('date', '=', date).executeTakeFirstOrThrow();
}

/** Extends the lease of `owner` on a row in `state`; false when the lease was lost. */
export async function renewLease(
  trx: Kysely<Database>,
  date: string,
  state: AuditSnapshotRow['state'],
  owner: string,
  now: number,
  leaseUntil: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('audit_snapshots')
    .set({ lease_until: leaseUntil, updated_at: now })
    .where('date', '=', date)
    .where('state', '=', state)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function deleteChunks(trx: Kysely<Database>, date: string): Promise<void> {
  await trx.deleteFrom('audit_chunks').where('date', '=', date).execute();
}

export async function insertChunks(trx: Kysely<Database>, rows: AuditChunkTable[]): Promise<void> {
  if (rows.length > 0) await trx.insertInto('audit_chunks').values(rows).execute();
}

/** Updates the row of `date` if `owner` holds it in `state`; false otherwise (lease lost or state moved on). */
export async function updateHeld(
  trx: Kysely<Database>,
  date: string,
  state: AuditSnapshotRow['state'],
  owner: string,
  changes: Partial<AuditSnapshotRow>,
): Promise<boolean> {
  const result = await trx
    .updateTable('audit_snapshots')
    .set(changes)
    .where('date', '=', date)
    .where('state', '=', state)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * Takes the anchoring lease of a snapshot that is built or submitted and due; starts with the write
 * (see claimBuild). Returns the row when taken.
 */
export async function claimAnchoring(
  trx: Kysely<Database>,
  date: string,
  owner: string,
  now: number,
  leaseUntil: number,
): Promise<AuditSnapshotRow | undefined> {
  const result = await trx
    .updateTable('audit_snapshots')
    .set({ lease_owner: owner, lease_until: leaseUntil, updated_at: now })
    .where('date', '=', date)
    .where('state', 'in', ['built', 'submitted'])
    .where('next_anchor_at', '<=', now)
    .where((eb) => eb.or([eb('lease_owner', '=', owner), eb('lease_until', '<=', now)]))
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) return undefined;
  return trx.selectFrom('audit_snapshots').selectAll().where('date', '=', date).executeTakeFirst();
}

/** Dates of built snapshots whose anchoring step is due, oldest first. */
export async function dueForAnchoring(db: Kysely<Database>, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('audit_snapshots')
    .select('date')
    .where('next_anchor_at', '<=', now)
    .where('state', 'in', ['built', 'submitted'])
    .orderBy('date')
    .limit(limit)
    .execute();
  return rows.map((r) => r.date);
}

export type LeafRow = Pick<Database['orders'], (typeof LEAF_COLUMNS)[number]>;

/**
 * One page of a day's orders in id order (keyset pagination after `afterId`). The id bounds only
 * steer the primary key index (see orderIdFloor); created_at decides membership.
 */
export async function dayOrdersPage(
  db: Kysely<Database>,
  day: { start: number; end: number; idFrom: string; idTo: string },
  afterId: string | null,
  limit: number,
): Promise<LeafRow[]> {
  return db
    .selectFrom('orders')
    .select(LEAF_COLUMNS)
    .where('id', '>', afterId ?? day.idFrom)
    .where('id', '<', day.idTo)
    .where('created_at', '>=', day.start)
    .where('created_at', '<', day.end)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Number of orders created in [start, end), from the orders_created_at index. */
export async function countDayOrders(db: Kysely<Database>, start: number, end: number): Promise<number> {
  const row = await db
    .selectFrom('orders')
    .select(sql<number | string>`count(*)`.as('n'))
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The chunk of `date` that holds `orderId`: the last one whose first order id is not after it. */
export async function findChunkFor(db: Kysely<Database>, date: string, orderId: string): Promise<AuditChunkTable | undefined> {
  return db
    .selectFrom('audit_chunks')
    .selectAll()
    .where('date', '=', date)
    .where('first_order_id', '<=', orderId)
    .orderBy('first_order_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The versions of a client's order its events recorded (`order.created`, then each `order.amended`),
 * oldest first, as the events' JSON data. Read through the client's events from `fromId` on (an id
 * floor at the order's creation), so the range starts where the order did.
 */
export async function orderVersions(db: Kysely<Database>, clientId: string, orderId: string, fromId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('events')
    .select('data')
    .where('client_id', '=', clientId)
    .where('id', '>=', fromId)
    .where('subject_ref', '=', orderId)
    .where('type', 'in', ['order.created', 'order.amended'])
    .orderBy('id')
    .execute();
  return rows.map((row) => row.data);
}

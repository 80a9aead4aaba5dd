import { sql, type Kysely } from 'kysely';
import { ID_TIME_MARGIN_MS, idFloorAt } from '../lib/ids.js';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedInsert, PreparedQuery, PreparedUpdate } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { OrderFillTable, OrderRow } from './order.table.js';

const orderInsert = new PreparedInsert('orders');

export async function insertOrder(db: Kysely<Database>, row: OrderRow): Promise<void> {
  await orderInsert.run(db, row);
}

const orderById = (qb: Kysely<Database>, id: string) => qb.selectFrom('orders').selectAll().where('id', '=', id);
const order = new PreparedQuery(1, orderById);
const orderForUpdate = new PreparedQuery(1, (qb, id: string) => orderById(qb, id).forUpdate());

export async function findOrder(db: Kysely<Database>, id: string): Promise<OrderRow | undefined> {
  return order.first(db, id);
}

/** The order with its row locked until the transaction ends (PostgreSQL; SQLite transactions are serial). */
export async function findOrderForUpdate(db: Kysely<Database>, dialect: DialectName, id: string): Promise<OrderRow | undefined> {
  return dialectOf(dialect).rowLocked({ locking: orderForUpdate, plain: order }).first(db, id);
}

/**
 * The orders `ids` that exist, by id, each row locked as by findOrderForUpdate, in one statement;
 * taken in id order, so that two transactions locking overlapping sets never wait for each other
 * in a cycle.
 */
export async function findOrdersForUpdate(
  db: Kysely<Database>,
  dialect: DialectName,
  ids: readonly string[],
): Promise<Map<string, OrderRow>> {
  const found = new Map<string, OrderRow>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return found;
  const query = db.selectFrom('orders').selectAll().where('id', 'in', unique).orderBy('id');
  const rows = await dialectOf(dialect).rowLocked({ locking: query.forUpdate(), plain: query }).execute();
  for (const row of rows) found.set(row.id, row);
  return found;
}

const clientOrder = new PreparedQuery(2, (qb, clientId: string, id: string) =>
  qb.selectFrom('orders').selectAll().where('id', '=', id).where('client_id', '=', clientId),
);

export async function findClientOrder(db: Kysely<Database>, clientId: string, id: string): Promise<OrderRow | undefined> {
  return clientOrder.first(db, clientId, id);
}

const clientOrderForUpdate = new PreparedQuery(2, (qb, clientId: string, id: string) =>
  qb.selectFrom('orders').selectAll().where('id', '=', id).where('client_id', '=', clientId).forUpdate(),
);

/**
 * The client's order with its row locked until the transaction ends (PostgreSQL; SQLite transactions
 * are serial): a cancel or amend request reads the order it changes so, and a second request of the
 * same order waits and then sees the first.
 */
export async function findClientOrderForUpdate(
  db: Kysely<Database>,
  dialect: DialectName,
  clientId: string,
  id: string,
): Promise<OrderRow | undefined> {
  return dialectOf(dialect).rowLocked({ locking: clientOrderForUpdate, plain: clientOrder }).first(db, clientId, id);
}

/** Prepared once per set of columns changed (the order paths change a handful of such sets). */
const orderUpdate = new PreparedUpdate('orders', ['id']);

export async function updateOrder(db: Kysely<Database>, id: string, changes: Partial<OrderRow>): Promise<void> {
  await orderUpdate.run(db, [id], changes);
}

/**
 * The sequence number of the last report applied to each of `ids` (orders not found are absent).
 * A plain read: the number only grows, so a report at or below it is known to be a duplicate.
 */
export async function lastReportSeqs(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, number>> {
  const seqs = new Map<string, number>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('orders')
      .select(['id', 'last_report_seq'])
      .where('id', 'in', unique.slice(i, i + 500))
      .execute();
    for (const row of rows) seqs.set(row.id, row.last_report_seq);
  }
  return seqs;
}

const fillInsert = new PreparedInsert('order_fills');

export async function insertFill(db: Kysely<Database>, row: OrderFillTable): Promise<void> {
  await fillInsert.run(db, row);
}

const fillsOfOrder = new PreparedQuery(1, (qb, orderId: string) =>
  qb.selectFrom('order_fills').selectAll().where('order_id', '=', orderId).orderBy('seq'),
);

/** An order's fills, oldest first (in the order the partner reported them). */
export async function listFills(db: Kysely<Database>, orderId: string): Promise<OrderFillTable[]> {
  return fillsOfOrder.execute(db, orderId);
}

/**
 * Bounds of the ids of orders created from `ms` on (`idFrom`) and before `ms` (`idBefore`): ids sort by
 * creation time, and an id's time may run ahead of its created_at, never behind, so only the upper
 * bound is widened (ID_TIME_MARGIN_MS). They steer an index scan; created_at decides.
 */
const idFrom = (ms: number) => idFloorAt('order', ms);
const idBefore = (ms: number) => idFloorAt('order', ms + ID_TIME_MARGIN_MS);

/**
 * One subject's orders created in [startMs, endMs): what its monthly cap counts. Read from the index
 * (client_id, subject_id, id) by id range (idFrom, idBefore).
 */
const ordersInWindowQuery = (
  qb: Kysely<Database>,
  clientId: string,
  subjectId: string,
  firstId: string,
  beforeId: string,
  startMs: number,
  endMs: number,
) =>
  qb
    .selectFrom('orders')
    .select([
      'instrument',
      'side',
      'status',
      'qty',
      'limit_price_cents',
      'reference_price_cents',
      'fill_notional_cents',
      'created_at',
      'pending_request',
      'amend_qty',
      'amend_limit_price_cents',
    ])
    .where('client_id', '=', clientId)
    .where('subject_id', '=', subjectId)
    .where('id', '>=', firstId)
    .where('id', '<', beforeId)
    .where('created_at', '>=', startMs)
    .where('created_at', '<', endMs);
const ordersInWindow = new PreparedQuery(6, ordersInWindowQuery);

export async function subjectOrdersInWindow(db: Kysely<Database>, clientId: string, subjectId: string, startMs: number, endMs: number) {
  return ordersInWindow.execute(db, clientId, subjectId, idFrom(startMs), idBefore(endMs), startMs, endMs);
}

// The condition of the partial index orders_client_status, word for word (SQLite uses a partial
// index only for a query that repeats it).
const NOT_FILLED = sql<boolean>`status <> 'filled'`;

export interface OrderFilter {
  status?: string;
  rcpt_to?: string;
  instrument?: string;
  kyc_attestation_id?: string;
  /** The subject of `kyc_attestation_id` (its orders are read from the subject's index). */
  subjectId?: string;
  createdGte?: number;
  createdLt?: number;
}

/**
 * A page of a client's orders, newest first. `before` continues towards older orders (next page);
 * `after` goes back towards newer ones (previous page) and is returned newest first as well.
 *
 * Each page is read in id order from an index that holds the client's orders: all of them
 * (client_id, id), one subject's (client_id, subject_id, id) when filtered by attestation, or one
 * status's (client_id, status, id) when filtered by a status other than `filled`. A creation-time
 * range bounds the ids read (ids sort by creation time). `rcpt_to` and `instrument` narrow what that
 * index yields: their cost grows with the orders they skip.
 */
export async function listClientOrders(
  db: Kysely<Database>,
  clientId: string,
  filter: OrderFilter,
  page: { limit: number; before?: string; after?: string },
): Promise<OrderRow[]> {
  return clientOrdersQuery(db, clientId, filter, page).execute();
}

/** The query of listClientOrders (see there), to run or to explain. */
export function clientOrdersQuery(
  db: Kysely<Database>,
  clientId: string,
  filter: OrderFilter,
  page: { limit: number; before?: string; after?: string },
) {
  let query = db.selectFrom('orders').selectAll().where('client_id', '=', clientId);
  if (filter.subjectId !== undefined) query = query.where('subject_id', '=', filter.subjectId);
  if (filter.status !== undefined) {
    query = query.where('status', '=', filter.status as OrderRow['status']);
    if (filter.status !== 'filled') query = query.where(NOT_FILLED);
  }
  if (filter.rcpt_to !== undefined) query = query.where('rcpt_to', '=', filter.rcpt_to);
  if (filter.instrument !== undefined) query = query.where('instrument', '=', filter.instrument);
  if (filter.kyc_attestation_id !== undefined) query = query.where('kyc_attestation_id', '=', filter.kyc_attestation_id);
  if (filter.createdGte !== undefined)
    query = query.where('created_at', '>=', filter.createdGte).where('id', '>=', idFrom(filter.createdGte));
  if (filter.createdLt !== undefined) query = query.where('created_at', '<', filter.createdLt).where('id', '<', idBefore(filter.createdLt));
  if (page.after !== undefined)
    return query
      .where('id', '>', page.after)
      .orderBy('id', 'asc')
      .limit(page.limit + 1);
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  return query.orderBy('id', 'desc').limit(page.limit + 1);
}

/** The monthly cap's query (see subjectOrdersInWindow), to explain. */
export function subjectOrdersInWindowQuery(db: Kysely<Database>, clientId: string, subjectId: string, startMs: number, endMs: number) {
  return ordersInWindowQuery(db, clientId, subjectId, idFrom(startMs), idBefore(endMs), startMs, endMs);
}

/**
 * Orders the router must act on now (hand-over or cancel), claimed with a lease; SKIP LOCKED on
 * PostgreSQL. Run it in a transaction so that the read and the lease commit together.
 */
export async function claimDueOrders(
  trx: Kysely<Database>,
  dialect: DialectName,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<OrderRow[]> {
  {
    let query = trx
      .selectFrom('orders')
      .selectAll()
      .where('next_route_at', '<=', now)
      .where((eb) => eb.or([eb('route_lease_until', 'is', null), eb('route_lease_until', '<=', now)]))
      .orderBy('next_route_at')
      .limit(limit);
    query = dialectOf(dialect).rowLocked({ locking: query.modifyEnd(sql`for update skip locked`), plain: query });
    const rows = await query.execute();
    if (rows.length > 0) {
      await trx
        .updateTable('orders')
        .set({ route_lease_until: now + leaseMs })
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    }
    return rows;
  }
}

/**
 * The orders of partner `partnerId` that wait out a backoff after an attempt the partner could not
 * take (a hand-over, a cancel or an amend) become due at once: the partner is reachable again.
 * Returns how many.
 */
export async function retryPartnerOrdersNow(db: Kysely<Database>, partnerId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('orders')
    .set({ next_route_at: now })
    .where('next_route_at', '>', now)
    .where('rcpt_to', '=', partnerId)
    .where('route_attempts', '>', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

// Orders open at the partner, the condition of the partial index `orders_open_partner` word for word,
// literals included: SQLite uses a partial index only for a query that repeats its condition.
const OPEN = sql<boolean>`status in ('routed', 'partially_filled')`;

/** The first open order's partner after (`rcpt_to`, `connector`), in that order: one step down the partial index. */
export const openPartnerAfterQuery = (db: Kysely<Database>, rcptTo: string, connector: string) =>
  db
    .selectFrom('orders')
    .select(['rcpt_to', 'connector'])
    .where(OPEN)
    .where((eb) => eb(eb.refTuple('rcpt_to', 'connector'), '>', eb.tuple(rcptTo, connector)))
    .orderBy('rcpt_to')
    .orderBy('connector')
    .limit(1);
const firstOpenPartner = new PreparedQuery(0, (db) =>
  db.selectFrom('orders').select(['rcpt_to', 'connector']).where(OPEN).orderBy('rcpt_to').orderBy('connector').limit(1),
);
const openPartnerAfter = new PreparedQuery(2, openPartnerAfterQuery);

/**
 * Partners with orders still open at the partner: the report logs the router must read, at every
 * poll. Read as a skip scan of the partial index of open orders, one step per partner, so that a poll
 * costs a few index lookups however many orders are open; a DISTINCT read every open order's entry
 * (13 ms a poll with some 10,000 open on PostgreSQL, growing with them).
 */
export async function partnersWithOpenOrders(db: Kysely<Database>): Promise<{ rcpt_to: string; connector: string }[]> {
  const partners: { rcpt_to: string; connector: string }[] = [];
  let next = await firstOpenPartner.first(db);
  while (next !== undefined) {
    partners.push(next);
    next = await openPartnerAfter.first(db, next.rcpt_to, next.connector);
  }
  return partners;
}

/**
 * Claims the orders whose expiry is due: each becomes a pending cancel with reason `expired`, leased
 * to this process for `leaseMs` and due for the router at once, and leaves the expiry queue, all in
 * the caller's transaction. An order already waiting on a cancel only leaves the queue (that cancel
 * goes on) and is not returned. Rows are locked with SKIP LOCKED on PostgreSQL, so that processes
 * claiming together take different orders; on SQLite transactions run one at a time, and the update
 * is conditional on the order still being in the queue. Returns the ids claimed.
 */
/**
 * Claims due expiries. Without `testClock`, the orders on real time due at `now` (orders on a test
 * clock are left to their clock); with it, that clock's orders due at its time `testClock.at`.
 */
export async function claimExpiredOrders(
  trx: Kysely<Database>,
  dialect: DialectName,
  now: number,
  leaseMs: number,
  limit: number,
  testClock?: { id: string; at: number },
): Promise<string[]> {
  let query = trx
    .selectFrom('orders')
    .select(['id', 'pending_request', 'requests_made'])
    .where('expiry_due_at', '<=', testClock?.at ?? now)
    .where('test_clock_id', testClock === undefined ? 'is' : '=', testClock?.id ?? null)
    .orderBy('expiry_due_at')
    .limit(limit);
  query = dialectOf(dialect).rowLocked({ locking: query.modifyEnd(sql`for update skip locked`), plain: query });
  const claimed: string[] = [];
  for (const row of await query.execute()) {
    const changes: Partial<OrderRow> =
      row.pending_request === 'pending_cancel'
        ? { expiry_due_at: null }
        : {
            expiry_due_at: null,
            pending_request: 'pending_cancel',
            pending_request_id: `${row.id}.${row.requests_made + 1}`,
            requests_made: row.requests_made + 1,
            cancel_request_reason: 'expired',
            amend_qty: null,
            amend_limit_price_cents: null,
            next_route_at: now,
            route_lease_until: now + leaseMs,
            updated_at: now,
          };
    const result = await trx
      .updateTable('orders')
      .set(changes)
      .where('id', '=', row.id)
      .where('expiry_due_at', 'is not', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1 && row.pending_request !== 'pending_cancel') claimed.push(row.id);
  }
  return claimed;
}

import type { Kysely } from 'kysely';
import { atCommit } from '../../storage/at-commit.js';
import { PreparedInsert, PreparedQuery, PreparedUpdate } from '../../storage/prepared.js';
import type { Database } from '../../storage/schema.js';
import type { ExecutionReport } from '../connector.js';
import type { FixMessageRow, FixOrderRow, FixRequestRow, FixRequestState, FixSessionRow, FixSessionState } from './fix.table.js';

/** Another process (or a stale instance) moved the session's sequence number: nothing was written. */
export class SequenceConflictError extends Error {
  constructor(partnerId: string, seq: number) {
    super(`FIX session of ${partnerId}: sequence number ${seq} is no longer the next one to send`);
    this.name = 'SequenceConflictError';
  }
}

export async function findSession(db: Kysely<Database>, partnerId: string): Promise<FixSessionRow | undefined> {
  return db.selectFrom('fix_sessions').selectAll().where('partner_id', '=', partnerId).executeTakeFirst();
}

export async function listSessions(db: Kysely<Database>): Promise<FixSessionRow[]> {
  return db.selectFrom('fix_sessions').selectAll().orderBy('partner_id').execute();
}

type SessionKey = { partnerId: string; beginString: string; senderCompId: string; targetCompId: string; period: string | null };

/** Creates the session's row (sequence numbers 1) unless it exists; it changes nothing otherwise. */
export async function insertSessionIfMissing(db: Kysely<Database>, key: SessionKey, now: number): Promise<void> {
  const row: FixSessionRow = {
    partner_id: key.partnerId,
    begin_string: key.beginString,
    sender_comp_id: key.senderCompId,
    target_comp_id: key.targetCompId,
    next_sender_seq: 1,
    next_target_seq: 1,
    period: key.period,
    report_pos: 0,
    state: 'disconnected',
    last_sent_at: null,
    last_received_at: null,
    last_logon_at: null,
    last_error: null,
    lease_owner: null,
    lease_until: 0,
    updated_at: now,
  };
  await db
    .insertInto('fix_sessions')
    .values(row)
    .onConflict((oc) => oc.column('partner_id').doNothing())
    .execute();
}

/**
 * The session's row for these CompIDs and this session window, created on first use. A session whose
 * CompIDs or window changed is a new FIX session: both sequence numbers start again at 1 (the
 * messages kept for resends belong to the old one and are removed). The report log continues. Only
 * the process holding the session's lease calls it.
 */
export async function openSession(trx: Kysely<Database>, key: SessionKey, now: number): Promise<FixSessionRow> {
  await insertSessionIfMissing(trx, key, now);
  const existing = await trx.selectFrom('fix_sessions').selectAll().where('partner_id', '=', key.partnerId).executeTakeFirstOrThrow();
  const fresh = {
    begin_string: key.beginString,
    sender_comp_id: key.senderCompId,
    target_comp_id: key.targetCompId,
    next_sender_seq: 1,
    next_target_seq: 1,
    period: key.period,
    updated_at: now,
  };
  const same =
    existing.begin_string === key.beginString &&
    existing.sender_comp_id === key.senderCompId &&
    existing.target_comp_id === key.targetCompId &&
    existing.period === key.period;
  if (same) return existing;
  await trx.updateTable('fix_sessions').set(fresh).where('partner_id', '=', key.partnerId).execute();
  await trx.deleteFrom('fix_messages').where('partner_id', '=', key.partnerId).execute();
  return { ...existing, ...fresh };
}

/**
 * Commits `count` messages from `seq` on as sent: the session's next sequence number moves from
 * `seq` to `seq + count`, only if it still is `seq` (otherwise SequenceConflictError, and the
 * caller's transaction rolls back).
 */
// The statements of every order's hand-over and answer are prepared once (storage/prepared.ts).
const sentCommit = new PreparedQuery(4, (qb, partnerId: string, seq: number, nextSeq: number, now: number) =>
  qb
    .updateTable('fix_sessions')
    .set({ next_sender_seq: nextSeq, last_sent_at: now, updated_at: now })
    .where('partner_id', '=', partnerId)
    .where('next_sender_seq', '=', seq)
    .returning('partner_id'),
);

export async function commitSent(trx: Kysely<Database>, partnerId: string, seq: number, now: number, count = 1): Promise<void> {
  const updated = await sentCommit.execute(trx, partnerId, seq, seq + count, now);
  if (updated.length !== 1) throw new SequenceConflictError(partnerId, seq);
}

const messageInsert = new PreparedInsert('fix_messages', 20);

export async function insertMessage(trx: Kysely<Database>, row: FixMessageRow): Promise<void> {
  await messageInsert.run(trx, row);
}

/** Stores messages sent together (up to 20 rows a statement). */
export async function insertMessages(trx: Kysely<Database>, rows: readonly FixMessageRow[]): Promise<void> {
  await messageInsert.runMany(trx, rows);
}

export async function messagesBetween(db: Kysely<Database>, partnerId: string, from: number, to: number): Promise<FixMessageRow[]> {
  return db
    .selectFrom('fix_messages')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('seq', '>=', from)
    .where('seq', '<=', to)
    .orderBy('seq')
    .execute();
}

const receivedCommit = new PreparedQuery(3, (qb, partnerId: string, nextTargetSeq: number, now: number) =>
  qb
    .updateTable('fix_sessions')
    .set({ next_target_seq: nextTargetSeq, last_received_at: now, updated_at: now })
    .where('partner_id', '=', partnerId),
);

export async function commitReceived(trx: Kysely<Database>, partnerId: string, nextTargetSeq: number, now: number): Promise<void> {
  await receivedCommit.execute(trx, partnerId, nextTargetSeq, now);
}

/** Resets both sequence numbers (the partner asked for it with ResetSeqNumFlag). */
export async function resetSequences(trx: Kysely<Database>, partnerId: string, now: number): Promise<void> {
  await trx
    .updateTable('fix_sessions')
    .set({ next_sender_seq: 1, next_target_seq: 1, updated_at: now })
    .where('partner_id', '=', partnerId)
    .execute();
  await trx.deleteFrom('fix_messages').where('partner_id', '=', partnerId).execute();
}

export async function setSessionState(
  db: Kysely<Database>,
  partnerId: string,
  state: FixSessionState,
  now: number,
  extra: { lastError?: string | null; loggedOn?: boolean } = {},
): Promise<void> {
  await db
    .updateTable('fix_sessions')
    .set({
      state,
      updated_at: now,
      ...(extra.lastError === undefined ? {} : { last_error: extra.lastError }),
      ...(extra.loggedOn === true ? { last_logon_at: now } : {}),
    })
    .where('partner_id', '=', partnerId)
    .execute();
}

const orderAtPartner = new PreparedQuery(2, (qb, partnerId: string, orderId: string) =>
  qb.selectFrom('fix_orders').selectAll().where('partner_id', '=', partnerId).where('order_id', '=', orderId),
);

export async function findOrderAtPartner(db: Kysely<Database>, partnerId: string, orderId: string): Promise<FixOrderRow | undefined> {
  return orderAtPartner.first(db, partnerId, orderId);
}

const orderAtPartnerInsert = new PreparedInsert('fix_orders');

export async function insertOrderAtPartner(trx: Kysely<Database>, row: FixOrderRow): Promise<void> {
  await orderAtPartnerInsert.run(trx, row);
}

const orderAtPartnerUpdate = new PreparedUpdate('fix_orders', ['partner_id', 'order_id']);

export async function updateOrderAtPartner(
  trx: Kysely<Database>,
  partnerId: string,
  orderId: string,
  changes: Partial<Pick<FixOrderRow, 'state' | 'qty' | 'body' | 'cum_qty' | 'report_seq' | 'partner_order_id' | 'updated_at'>>,
): Promise<void> {
  await orderAtPartnerUpdate.run(trx, [partnerId, orderId], changes);
}

const requestInsert = new PreparedInsert('fix_requests');

export async function insertRequest(trx: Kysely<Database>, row: FixRequestRow): Promise<void> {
  await requestInsert.run(trx, row);
}

const requestByClOrdId = new PreparedQuery(2, (qb, partnerId: string, clOrdId: string) =>
  qb.selectFrom('fix_requests').selectAll().where('partner_id', '=', partnerId).where('cl_ord_id', '=', clOrdId),
);

export async function findRequest(db: Kysely<Database>, partnerId: string, clOrdId: string): Promise<FixRequestRow | undefined> {
  return requestByClOrdId.first(db, partnerId, clOrdId);
}

/** The request sent under MsgSeqNum `seq` (the RefSeqNum of a Reject names it). */
export async function findRequestBySeq(db: Kysely<Database>, partnerId: string, seq: number): Promise<FixRequestRow | undefined> {
  return db
    .selectFrom('fix_requests')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('seq', '=', seq)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

const requestsByOrder = new PreparedQuery(2, (qb, partnerId: string, orderId: string) =>
  qb.selectFrom('fix_requests').selectAll().where('partner_id', '=', partnerId).where('order_id', '=', orderId).orderBy('created_at'),
);

export async function requestsOfOrder(db: Kysely<Database>, partnerId: string, orderId: string): Promise<FixRequestRow[]> {
  return requestsByOrder.execute(db, partnerId, orderId);
}

const requestStateUpdate = new PreparedUpdate('fix_requests', ['partner_id', 'cl_ord_id']);

export async function setRequestState(trx: Kysely<Database>, partnerId: string, clOrdId: string, state: FixRequestState): Promise<void> {
  await requestStateUpdate.run(trx, [partnerId, clOrdId], { state });
}

const execIdClaim = new PreparedQuery(4, (qb, partnerId: string, orderId: string, execId: string, now: number) =>
  qb
    .insertInto('fix_exec_ids')
    .values({ partner_id: partnerId, order_id: orderId, exec_id: execId, applied_at: now })
    .onConflict((oc) => oc.columns(['partner_id', 'order_id', 'exec_id']).doNothing())
    .returning('exec_id'),
);

/** Records that ExecID `execId` of an order is applied; false when it already was. */
export async function claimExecId(
  trx: Kysely<Database>,
  partnerId: string,
  orderId: string,
  execId: string,
  now: number,
): Promise<boolean> {
  return (await execIdClaim.execute(trx, partnerId, orderId, execId, now)).length === 1;
}

const reportPosMove = new PreparedQuery(2, (qb, partnerId: string, n: number) =>
  qb
    .updateTable('fix_sessions')
    .set((eb) => ({ report_pos: eb('report_pos', '+', n) }))
    .where('partner_id', '=', partnerId)
    .returning('report_pos'),
);
const reportInsert = new PreparedInsert('fix_reports', 20);

/** Appends reports to the partner's log, after its last position (the session row serialises writers). */
async function appendReports(trx: Kysely<Database>, partnerId: string, reports: readonly ExecutionReport[]): Promise<void> {
  if (reports.length === 0) return;
  const session = await reportPosMove.first(trx, partnerId, reports.length);
  if (session === undefined) throw new Error(`no FIX session row for partner ${partnerId}`);
  const first = Number(session.report_pos) - reports.length + 1;
  await reportInsert.runMany(
    trx,
    reports.map((r, i) => ({
      partner_id: partnerId,
      pos: first + i,
      order_id: r.order_id,
      seq: r.seq,
      type: r.type,
      report: JSON.stringify(r),
    })),
  );
}

/** Reports to append with the last writes of their transaction, by transaction. */
const LOGGED_AT_COMMIT = new WeakMap<object, { readonly partnerId: string; readonly reports: ExecutionReport[] }>();

/**
 * Appends reports to the partner's log with the last writes of the transaction `trx` (atCommit), in
 * the order given: the reports of every message a transaction applies take one position move and one
 * insert of up to 20 rows, where each message took two statements. Nothing in the transaction may
 * read them back from the log.
 */
export function appendReportsAtCommit(trx: Kysely<Database>, partnerId: string, reports: readonly ExecutionReport[]): void {
  if (reports.length === 0) return;
  const open = LOGGED_AT_COMMIT.get(trx);
  if (open !== undefined && open.partnerId === partnerId) {
    open.reports.push(...reports);
    return;
  }
  const batch = { partnerId, reports: [...reports] };
  const forget = () => {
    if (LOGGED_AT_COMMIT.get(trx) === batch) LOGGED_AT_COMMIT.delete(trx);
  };
  LOGGED_AT_COMMIT.set(trx, batch);
  atCommit(trx, () => {
    forget();
    return appendReports(trx, partnerId, batch.reports);
  }).catch(forget); // discarded with the work that registered it: the connection's next work starts its own
}

export async function reportsAfter(
  db: Kysely<Database>,
  partnerId: string,
  pos: number,
  limit: number,
): Promise<{ pos: number; report: ExecutionReport }[]> {
  const rows = await db
    .selectFrom('fix_reports')
    .select(['pos', 'report'])
    .where('partner_id', '=', partnerId)
    .where('pos', '>', pos)
    .orderBy('pos')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ pos: Number(r.pos), report: JSON.parse(r.report) as ExecutionReport }));
}

export async function reportsOfOrder(db: Kysely<Database>, partnerId: string, orderId: string): Promise<ExecutionReport[]> {
  const rows = await db
    .selectFrom('fix_reports')
    .select('report')
    .where('partner_id', '=', partnerId)
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => JSON.parse(r.report) as ExecutionReport);
}

/**
 * Takes or renews the lease on a partner's session for `owner` until `now + ms`; false when another
 * process holds an unexpired lease. The session row must exist (openSession).
 */
export async function leaseSession(db: Kysely<Database>, partnerId: string, owner: string, now: number, ms: number): Promise<boolean> {
  const result = await db
    .updateTable('fix_sessions')
    .set({ lease_owner: owner, lease_until: now + ms })
    .where('partner_id', '=', partnerId)
    .where((eb) => eb.or([eb('lease_owner', '=', owner), eb('lease_until', '<', now), eb('lease_owner', 'is', null)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseSession(db: Kysely<Database>, partnerId: string, owner: string): Promise<void> {
  await db
    .updateTable('fix_sessions')
    .set({ lease_owner: null, lease_until: 0 })
    .where('partner_id', '=', partnerId)
    .where('lease_owner', '=', owner)
    .execute();
}

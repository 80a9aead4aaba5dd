import { sql, type Kysely } from 'kysely';
import type { EventRow } from '../events/event.table.js';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedInsert, PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow, WebhookMessageTable } from './webhook.table.js';

// Rows per multi-row INSERT: 15 columns × 400 rows stays far below both engines' parameter limits.
const INSERT_CHUNK = 400;

// ----- Fan-out ------------------------------------------------------------------------------------

/**
 * The first `limit` events on the queue, oldest first. The queue's rows are taken first, in a
 * subquery with the limit, and their events then looked up by key one by one, so that a fan-out
 * reads at most `limit` events however many the table holds. Written as a plain join, PostgreSQL
 * merged or hashed it with the whole events table (every event older than the first queued one, read
 * at each fan-out of a long-running deployment); the lateral lookup, which cannot be turned into such
 * a join, keeps it to the queued ones. `locked` (PostgreSQL) locks the queue rows taken, skipping
 * those another worker holds; SQLite has no LATERAL, and its planner looks the events up by key anyway.
 */
export const pendingEventsQuery = (db: Kysely<Database>, limit: number, locked: boolean) => {
  const queue = db.selectFrom('event_queue').select('event_id').orderBy('event_id').limit(limit);
  if (!locked) {
    return db.selectFrom(queue.as('q')).innerJoin('events as e', 'e.id', 'q.event_id').selectAll('e').orderBy('q.event_id');
  }
  return db
    .selectFrom(queue.forUpdate().skipLocked().as('q'))
    .innerJoinLateral(
      (eb) => eb.selectFrom('events').selectAll().whereRef('events.id', '=', 'q.event_id').limit(1).as('e'),
      (join) => join.onTrue(),
    )
    .selectAll('e')
    .orderBy('q.event_id');
};
const pendingEvents = new PreparedQuery(1, (db, limit: number) => pendingEventsQuery(db, limit, false));
const pendingEventsLocked = new PreparedQuery(1, (db, limit: number) => pendingEventsQuery(db, limit, true));

/**
 * The oldest events not yet fanned out (on the queue), in id order. On PostgreSQL their queue rows
 * are locked until the caller's transaction ends and rows another worker holds are skipped, so two
 * workers never fan out the same event; on SQLite the write transaction already excludes every other
 * writer.
 */
export async function lockPendingEvents(trx: Kysely<Database>, dialect: DialectName, limit: number): Promise<EventRow[]> {
  return dialectOf(dialect).rowLocked({ locking: pendingEventsLocked, plain: pendingEvents }).execute(trx, limit);
}

const pendingEvent = new PreparedQuery(0, (db) => db.selectFrom('event_queue').select('event_id').limit(1));
const queuedEvent = new PreparedQuery(1, (db, id: string) => db.selectFrom('event_queue').select('event_id').where('event_id', '=', id));

/**
 * Whether any event awaits fan-out, read without a transaction (on SQLite from the read connection):
 * the loop asks before every fan-out, which otherwise opens a write transaction to find nothing.
 */
export async function hasPendingEvents(db: Kysely<Database>): Promise<boolean> {
  return (await pendingEvent.first(db)) !== undefined;
}

/** Whether the event still waits for its fan-out. */
export async function isQueued(db: Kysely<Database>, eventId: string): Promise<boolean> {
  return (await queuedEvent.first(db, eventId)) !== undefined;
}

/** Takes fanned-out events off the queue. */
export async function dequeueEvents(trx: Kysely<Database>, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += INSERT_CHUNK)
    await trx
      .deleteFrom('event_queue')
      .where('event_id', 'in', ids.slice(i, i + INSERT_CHUNK))
      .execute();
}

const messagesInsert = new PreparedInsert('webhook_messages', INSERT_CHUNK);
const deliveriesInsert = new PreparedInsert('webhook_deliveries', INSERT_CHUNK);

export async function insertMessages(trx: Kysely<Database>, rows: readonly WebhookMessageTable[]): Promise<void> {
  await messagesInsert.runMany(trx, rows);
}

export async function insertDeliveries(trx: Kysely<Database>, rows: readonly WebhookDeliveryRow[]): Promise<void> {
  await deliveriesInsert.runMany(trx, rows);
}

// ----- Claiming and recording attempts ------------------------------------------------------------

// The two kinds of deliveries a worker may lease, written as the partial indexes of the queue state
// them (migration 2026-11-24T09-00): SQLite uses a partial index only for a query that repeats its
// condition, literal values included.
const UNLEASED = sql<boolean>`status = 'pending' and lease_owner is null`;
const LEASED = sql<boolean>`status = 'pending' and lease_owner is not null`;

/**
 * Due deliveries of enabled endpoints that no worker holds (never leased, or a lease that lapsed when
 * its worker died mid-attempt), at most `perEndpoint` per endpoint, earliest first. Read without
 * locks: the caller leases a subset with `leaseDeliveries`, which re-checks each row. The
 * per-endpoint bound keeps one endpoint's backlog from filling the whole batch.
 */
export async function dueCandidates(
  db: Kysely<Database>,
  now: number,
  perEndpoint: number,
  limit: number,
): Promise<{ id: string; endpoint_id: string }[]> {
  const result = await sql<{ id: string; endpoint_id: string }>`
    select id, endpoint_id from (
      select d.id, d.endpoint_id, d.next_attempt_at,
             row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rn
      from (
        select id, endpoint_id, next_attempt_at from webhook_deliveries
        where ${UNLEASED} and next_attempt_at <= ${now}
        union all
        select id, endpoint_id, next_attempt_at from webhook_deliveries
        where ${LEASED} and lease_until <= ${now}
      ) d
      join webhook_endpoints e on e.id = d.endpoint_id
      where e.disabled = 0 and e.deleted_at is null
    ) due
    where rn <= ${perEndpoint}
    order by next_attempt_at, id
    limit ${limit}`.execute(db);
  return result.rows;
}

const dueScan = new PreparedQuery(2, (db, now: number, scan: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id'])
    .where(UNLEASED)
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(scan),
);

const lapsedScan = new PreparedQuery(2, (db, now: number, scan: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id'])
    .where(LEASED)
    .where('lease_until', '<=', now)
    .orderBy('lease_until')
    .limit(scan),
);

const anyUnleased = new PreparedQuery(0, (db) => db.selectFrom('webhook_deliveries').select('id').where(UNLEASED).limit(1));
const anyLeased = new PreparedQuery(0, (db) => db.selectFrom('webhook_deliveries').select('id').where(LEASED).limit(1));

/** Whether any delivery is pending, due or not, leased or not (a probe of each queue index). */
export async function hasPendingDeliveries(db: Kysely<Database>): Promise<boolean> {
  return (await anyUnleased.first(db)) !== undefined || (await anyLeased.first(db)) !== undefined;
}

/** Whether any delivery is due and held by no worker at `now` (a probe of each queue index). */
export async function hasDueDeliveries(db: Kysely<Database>, now: number): Promise<boolean> {
  return (await dueScan.first(db, now, 1)) !== undefined || (await lapsedScan.first(db, now, 1)) !== undefined;
}

/**
 * `dueCandidates` over the `scan` earliest due deliveries no worker holds only: it walks the due
 * index in order and stops, so its cost does not grow with the backlog. Lapsed leases, rare (a worker
 * died mid-attempt), come first. `truncated` tells that a scan was cut short, so endpoints whose due
 * deliveries all lie beyond it are missing from `rows`; each endpoint present has its earliest
 * deliveries first, as in `dueCandidates`. The per-endpoint cap and the enabled check are applied
 * here rather than in SQL: a window function over the scan, and a second pass to count it, cost more
 * than the scan itself (docs/performance.md, "Figures behind the code"). `enabled` is the set of enabled
 * endpoints read for it (empty when nothing was due).
 */
export async function dueCandidatesBounded(
  db: Kysely<Database>,
  now: number,
  perEndpoint: number,
  limit: number,
  scan: number,
): Promise<{ rows: { id: string; endpoint_id: string }[]; truncated: boolean; enabled: ReadonlySet<string> }> {
  const lapsed = await lapsedScan.execute(db, now, scan);
  const due = await dueScan.execute(db, now, scan);
  // Fewer rows than `scan` (none included): the scan saw every such delivery.
  const truncated = lapsed.length >= scan || due.length >= scan;
  if (lapsed.length + due.length === 0) return { rows: [], truncated, enabled: new Set() };
  const enabled = new Set(await enabledEndpointIds(db));
  const taken = new Map<string, number>();
  const rows: { id: string; endpoint_id: string }[] = [];
  for (const row of lapsed.length === 0 ? due : [...lapsed, ...due]) {
    if (!enabled.has(row.endpoint_id)) continue;
    const n = taken.get(row.endpoint_id) ?? 0;
    if (n >= perEndpoint) continue;
    taken.set(row.endpoint_id, n + 1);
    rows.push(row);
    if (rows.length >= limit) break;
  }
  return { rows, truncated, enabled };
}

export async function enabledEndpointIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('webhook_endpoints').select('id').where('disabled', '=', 0).where('deleted_at', 'is', null).execute();
  return rows.map((r) => r.id);
}

const leasedCount = new PreparedQuery(1, (db, now: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select(['endpoint_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where(LEASED)
    .where('lease_until', '>', now)
    .groupBy('endpoint_id'),
);

/** Attempts in flight per endpoint, in every worker: pending deliveries whose lease has not lapsed (the leased index alone). */
export async function leasedPerEndpoint(db: Kysely<Database>, now: number): Promise<Map<string, number>> {
  const rows = await leasedCount.execute(db, now);
  return new Map(rows.map((r) => [r.endpoint_id, Number(r.n)]));
}

/**
 * Leases those of `ids` that are still due and unleased to `owner` until `now + leaseMs`, in the
 * caller's transaction, before anything is sent. PostgreSQL: FOR UPDATE SKIP LOCKED, so a row another
 * worker is leasing at this moment is skipped, and one it has just leased fails the re-checked
 * conditions.
 */
export async function leaseDeliveries(
  trx: Kysely<Database>,
  dialect: DialectName,
  ids: readonly string[],
  now: number,
  leaseMs: number,
  owner: string,
): Promise<WebhookDeliveryRow[]> {
  if (ids.length === 0) return [];
  // Selected by id alone, and re-checked here: given the conditions too, SQLite's planner walks the
  // due index over the whole backlog instead of looking the ids up.
  const query = trx.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids);
  const rows = (await dialectOf(dialect).rowLocked({ locking: query.forUpdate().skipLocked(), plain: query }).execute()).filter(
    (r) =>
      r.status === 'pending' && r.next_attempt_at !== null && r.next_attempt_at <= now && (r.lease_until === null || r.lease_until <= now),
  );
  if (rows.length === 0) return [];
  await trx
    .updateTable('webhook_deliveries')
    .set({ lease_until: now + leaseMs, lease_owner: owner })
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((r) => ({ ...r, lease_until: now + leaseMs, lease_owner: owner }));
}

/** Events by id, for the bodies of deliveries whose first attempt was never recorded. */
export async function findEvents(db: Kysely<Database>, ids: readonly string[]): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('events').selectAll().where('id', 'in', ids).execute();
}

/**
 * The stored bodies of events, with the events' origins (src/events/origin.ts), by event id; events
 * whose body is not stored are left out.
 */
export async function findMessagesWithOrigins(
  db: Kysely<Database>,
  eventIds: readonly string[],
): Promise<Map<string, { body: string; origin: string | null }>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_messages as m')
    .leftJoin('events as e', 'e.id', 'm.event_id')
    .select(['m.event_id', 'm.body', 'e.origin'])
    .where('m.event_id', 'in', eventIds)
    .execute();
  return new Map(rows.map((r) => [r.event_id, { body: r.body, origin: r.origin ?? null }]));
}

export async function findMessages(db: Kysely<Database>, eventIds: readonly string[]): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_messages').select(['event_id', 'body']).where('event_id', 'in', eventIds).execute();
  return new Map(rows.map((r) => [r.event_id, r.body]));
}

/**
 * Records an attempt and the delivery's new state, if `owner` still holds the lease it took with
 * `attemptsBefore` attempts made, and `message` (the body sent, when not stored yet; another
 * delivery of the event may have stored it already). False when the lease is not held (it lapsed and
 * another worker took the delivery): then nothing is written.
 */
const settleLease = new PreparedQuery(
  9,
  (
    db,
    status: DeliveryStatus,
    attempts: number,
    firstAttemptAt: number,
    nextAttemptAt: number | null,
    lastAttemptAt: number | null,
    updatedAt: number,
    id: string,
    owner: string,
    attemptsBefore: number,
  ) =>
    db
      .updateTable('webhook_deliveries')
      .set({
        status,
        attempts,
        first_attempt_at: firstAttemptAt,
        next_attempt_at: nextAttemptAt,
        last_attempt_at: lastAttemptAt,
        updated_at: updatedAt,
        lease_until: null,
        lease_owner: null,
      })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('attempts', '=', attemptsBefore)
      .returning('id'),
);
const insertAttempt = new PreparedInsert('webhook_attempts');
const insertMessage = new PreparedQuery(3, (db, eventId: string, body: string, createdAt: number) =>
  db
    .insertInto('webhook_messages')
    .values({ event_id: eventId, body, created_at: createdAt })
    .onConflict((oc) => oc.column('event_id').doNothing()),
);

export async function recordAttempt(
  trx: Kysely<Database>,
  owner: string,
  attemptsBefore: number,
  changes: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'first_attempt_at' | 'next_attempt_at' | 'last_attempt_at' | 'updated_at'>,
  attempt: WebhookAttemptRow,
  message: WebhookMessageTable | null = null,
): Promise<boolean> {
  const settled = await settleLease.execute(
    trx,
    changes.status,
    changes.attempts,
    changes.first_attempt_at,
    changes.next_attempt_at,
    changes.last_attempt_at,
    changes.updated_at,
    attempt.delivery_id,
    owner,
    attemptsBefore,
  );
  if (settled.length === 0) return false;
  await insertAttempt.run(trx, attempt);
  if (message !== null) await insertMessage.execute(trx, message.event_id, message.body, message.created_at);
  return true;
}

/** Gives back a lease without an attempt (the endpoint vanished between claim and send). */
export async function settleWithoutAttempt(
  db: Kysely<Database>,
  id: string,
  owner: string,
  changes: Partial<WebhookDeliveryRow>,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ ...changes, lease_until: null, lease_owner: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

// ----- The API's reads and changes --------------------------------------------------------------

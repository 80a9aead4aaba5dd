import { sql, type Kysely } from 'kysely';
import { dialectOf, type DialectName } from '../storage/dialect.js';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { PositionBookTable, PositionBreakTable, PositionStatementTable, PositionTable } from './position.table.js';

/** A subject's book at one partner. */
export interface BookKey {
  readonly client_id: string;
  readonly subject_id: string;
  readonly rcpt_to: string;
}

/** One position of a book. */
export interface PositionKey extends BookKey {
  readonly instrument: string;
}

const bookQuery = (qb: Kysely<Database>, clientId: string, subjectId: string, rcptTo: string) =>
  qb
    .selectFrom('position_books')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('subject_id', '=', subjectId)
    .where('rcpt_to', '=', rcptTo);
const book = new PreparedQuery(3, bookQuery);
const bookForUpdate = new PreparedQuery(3, (qb, clientId: string, subjectId: string, rcptTo: string) =>
  bookQuery(qb, clientId, subjectId, rcptTo).forUpdate(),
);

/**
 * The book, its row locked until the transaction ends (PostgreSQL; on SQLite a write transaction
 * already excludes every other writer); undefined when the subject has no position at the partner.
 */
export async function findBookForUpdate(trx: Kysely<Database>, dialect: DialectName, key: BookKey): Promise<PositionBookTable | undefined> {
  return dialectOf(dialect).rowLocked({ locking: bookForUpdate, plain: book }).first(trx, key.client_id, key.subject_id, key.rcpt_to);
}

const bookInsert = new PreparedQuery(5, (qb, clientId: string, subjectId: string, rcptTo: string, createdAt: number, updatedAt: number) =>
  qb
    .insertInto('position_books')
    .values({
      client_id: clientId,
      subject_id: subjectId,
      rcpt_to: rcptTo,
      statement_id: null,
      statement_as_of: null,
      created_at: createdAt,
      updated_at: updatedAt,
    })
    .onConflict((oc) => oc.columns(['client_id', 'subject_id', 'rcpt_to']).doNothing()),
);

/**
 * The book, created when missing, and locked (see findBookForUpdate); `made` when it was missing at
 * the first read (created here or by a concurrent transaction this one waited for).
 */
export async function lockBook(
  trx: Kysely<Database>,
  dialect: DialectName,
  key: BookKey,
  now: number,
): Promise<{ book: PositionBookTable; made: boolean }> {
  const found = await findBookForUpdate(trx, dialect, key);
  if (found !== undefined) return { book: found, made: false };
  // Two transactions creating one book: the second waits for the first's insert, then finds it.
  await bookInsert.execute(trx, key.client_id, key.subject_id, key.rcpt_to, now, now);
  const made = await findBookForUpdate(trx, dialect, key);
  if (made === undefined) throw new Error(`position book ${key.subject_id} at ${key.rcpt_to} not created`);
  return { book: made, made: true };
}

export async function updateBook(
  trx: Kysely<Database>,
  key: BookKey,
  changes: Pick<PositionBookTable, 'statement_id' | 'statement_as_of' | 'updated_at'>,
): Promise<void> {
  await trx
    .updateTable('position_books')
    .set(changes)
    .where('client_id', '=', key.client_id)
    .where('subject_id', '=', key.subject_id)
    .where('rcpt_to', '=', key.rcpt_to)
    .execute();
}

const position = new PreparedQuery(4, (qb, clientId: string, subjectId: string, rcptTo: string, instrument: string) =>
  qb
    .selectFrom('positions')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('subject_id', '=', subjectId)
    .where('rcpt_to', '=', rcptTo)
    .where('instrument', '=', instrument),
);

/** One position; read under its book's lock by every writer. */
export async function findPosition(db: Kysely<Database>, key: PositionKey): Promise<PositionTable | undefined> {
  return position.first(db, key.client_id, key.subject_id, key.rcpt_to, key.instrument);
}

const positionUpsert = new PreparedQuery(10, (qb, ...v: unknown[]) =>
  qb
    .insertInto('positions')
    .values({
      client_id: v[0] as string,
      subject_id: v[1] as string,
      rcpt_to: v[2] as string,
      instrument: v[3] as string,
      qty: v[4] as number,
      cost_cents: v[5] as string,
      realised_pnl_cents: v[6] as string,
      unsettled: v[7] as string,
      statement_as_of: v[8] as string | null,
      updated_at: v[9] as number,
    })
    .onConflict((oc) =>
      oc.columns(['client_id', 'subject_id', 'rcpt_to', 'instrument']).doUpdateSet((eb) => ({
        qty: eb.ref('excluded.qty'),
        cost_cents: eb.ref('excluded.cost_cents'),
        realised_pnl_cents: eb.ref('excluded.realised_pnl_cents'),
        unsettled: eb.ref('excluded.unsettled'),
        statement_as_of: eb.ref('excluded.statement_as_of'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    ),
);

export async function savePosition(trx: Kysely<Database>, row: PositionTable): Promise<void> {
  await positionUpsert.execute(
    trx,
    row.client_id,
    row.subject_id,
    row.rcpt_to,
    row.instrument,
    row.qty,
    row.cost_cents,
    row.realised_pnl_cents,
    row.unsettled,
    row.statement_as_of,
    row.updated_at,
  );
}

/** Replaces every position of the book with `rows` (a statement starts them again). */
export async function replaceBookPositions(trx: Kysely<Database>, key: BookKey, rows: readonly PositionTable[]): Promise<void> {
  await trx
    .deleteFrom('positions')
    .where('client_id', '=', key.client_id)
    .where('subject_id', '=', key.subject_id)
    .where('rcpt_to', '=', key.rcpt_to)
    .execute();
  for (const row of rows) await savePosition(trx, row);
}

export interface PositionFilter {
  subject_id?: string;
  rcpt_to?: string;
  instrument?: string;
}

/** The columns a listing returns: the client is the caller's. */
export type ListedPosition = Omit<PositionTable, 'client_id'>;

/** One prepared listing per set of filters given (and whether it continues after a key). */
const listings = new Map<string, PreparedQuery<unknown[], ListedPosition>>();

function listing(filters: readonly (keyof PositionFilter)[], after: boolean): PreparedQuery<unknown[], ListedPosition> {
  const shape = `${filters.join(',')}${after ? '>' : ''}`;
  let query = listings.get(shape);
  if (query === undefined) {
    query = new PreparedQuery(1 + filters.length + (after ? 3 : 0) + 1, (qb, ...args: unknown[]) => {
      let q = qb
        .selectFrom('positions')
        .select([
          'subject_id',
          'rcpt_to',
          'instrument',
          'qty',
          'cost_cents',
          'realised_pnl_cents',
          'unsettled',
          'statement_as_of',
          'updated_at',
        ])
        .where('client_id', '=', args[0] as string);
      filters.forEach((column, i) => {
        q = q.where(column, '=', args[1 + i] as string);
      });
      if (after) {
        const [subject, partner, instrument] = args.slice(1 + filters.length, 4 + filters.length) as [string, string, string];
        q = q.where((eb) => eb(eb.refTuple('subject_id', 'rcpt_to', 'instrument'), '>', eb.tuple(subject, partner, instrument)));
      }
      return q
        .orderBy('subject_id')
        .orderBy('rcpt_to')
        .orderBy('instrument')
        .limit(args.at(-1) as number);
    });
    listings.set(shape, query);
  }
  return query;
}

/**
 * A page of the client's positions in key order (subject, partner, instrument), after `after` (the
 * last key of the previous page); `limit + 1` rows tell whether another page follows. Read from the
 * primary key: one subject's positions are one range of it. Prepared once per set of filters: a
 * subject's positions are read on every call of a portfolio screen.
 */
export async function listPositions(
  db: Kysely<Database>,
  clientId: string,
  filter: PositionFilter,
  page: { limit: number; after?: readonly [string, string, string] },
): Promise<ListedPosition[]> {
  const filters = (['subject_id', 'rcpt_to', 'instrument'] as const).filter((column) => filter[column] !== undefined);
  const args: unknown[] = [clientId, ...filters.map((column) => filter[column]), ...(page.after ?? []), page.limit + 1];
  return listing(filters, page.after !== undefined).execute(db, ...args);
}

/** The time of each of these test clocks (deleted ones included), by id. */
export async function clockTimes(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('test_clocks').select(['id', 'frozen_time']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, Number(r.frozen_time)]));
}

// The condition of the partial index orders_open_sells, word for word (SQLite uses a partial index
// only for a query that repeats it).
const OPEN_SELLS = sql<boolean>`side = 'sell' and status in ('created', 'routed', 'partially_filled')`;

const openSells = new PreparedQuery(4, (qb, clientId: string, subjectId: string, rcptTo: string, instrument: string) =>
  qb
    .selectFrom('orders')
    .select(['id', 'qty', 'amend_qty', 'filled_qty'])
    .where('client_id', '=', clientId)
    .where('subject_id', '=', subjectId)
    .where('rcpt_to', '=', rcptTo)
    .where('instrument', '=', instrument)
    .where(OPEN_SELLS),
);

/** The subject's open sell orders of the instrument at the partner (created, routed, partially filled). */
export async function openSellOrders(
  db: Kysely<Database>,
  key: PositionKey,
): Promise<{ id: string; qty: number; amend_qty: number | null; filled_qty: number }[]> {
  return openSells.execute(db, key.client_id, key.subject_id, key.rcpt_to, key.instrument);
}

/** A fill of the book's orders, with what the positions need of its order. */
export interface BookFill {
  order_id: string;
  seq: number;
  instrument: string;
  side: 'buy' | 'sell';
  test_clock_id: string | null;
  fill_qty: number;
  fill_price_cents: number;
  executed_at: number;
}

/** The fills of the book's orders executed from `fromMs` on (all of them when null), in the order they executed. */
export async function bookFills(db: Kysely<Database>, key: BookKey, fromMs: number | null): Promise<BookFill[]> {
  let query = db
    .selectFrom('orders as o')
    .innerJoin('order_fills as f', 'f.order_id', 'o.id')
    .select(['f.order_id', 'f.seq', 'o.instrument', 'o.side', 'o.test_clock_id', 'f.fill_qty', 'f.fill_price_cents', 'f.executed_at'])
    .where('o.client_id', '=', key.client_id)
    .where('o.subject_id', '=', key.subject_id)
    .where('o.rcpt_to', '=', key.rcpt_to);
  if (fromMs !== null) query = query.where('f.executed_at', '>=', fromMs);
  const rows = await query.orderBy('f.executed_at').orderBy('f.order_id').orderBy('f.seq').execute();
  return rows.map((r) => ({ ...r, test_clock_id: r.test_clock_id ?? null }));
}

/**
 * The book's latest statement dated before `asOf` (the one a statement of that date is compared
 * with): of its date, the one no later statement corrected.
 */
export async function statementBefore(db: Kysely<Database>, key: BookKey, asOf: string): Promise<PositionStatementTable | undefined> {
  return db
    .selectFrom('position_statements')
    .selectAll()
    .where('client_id', '=', key.client_id)
    .where('subject_id', '=', key.subject_id)
    .where('rcpt_to', '=', key.rcpt_to)
    .where('as_of', '<', asOf)
    .where('replaced_by', 'is', null)
    .orderBy('as_of', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Stores a statement with its breaks; the statement it corrects (`row.replaces`) records it. */
export async function insertStatement(
  trx: Kysely<Database>,
  row: PositionStatementTable,
  breaks: readonly PositionBreakTable[],
): Promise<void> {
  await trx.insertInto('position_statements').values(row).execute();
  if (row.replaces !== null)
    await trx.updateTable('position_statements').set({ replaced_by: row.id }).where('id', '=', row.replaces).execute();
  if (breaks.length > 0)
    await trx
      .insertInto('position_breaks')
      .values([...breaks])
      .execute();
}

export async function findClientStatement(db: Kysely<Database>, clientId: string, id: string): Promise<PositionStatementTable | undefined> {
  return db.selectFrom('position_statements').selectAll().where('id', '=', id).where('client_id', '=', clientId).executeTakeFirst();
}

/** A page of the client's statements, newest first (by id, that is by declaration), after `before`. */
export async function listStatements(
  db: Kysely<Database>,
  clientId: string,
  filter: { subject_id?: string; rcpt_to?: string },
  page: { limit: number; before?: string },
): Promise<PositionStatementTable[]> {
  let query = db.selectFrom('position_statements').selectAll().where('client_id', '=', clientId);
  if (filter.subject_id !== undefined) query = query.where('subject_id', '=', filter.subject_id);
  if (filter.rcpt_to !== undefined) query = query.where('rcpt_to', '=', filter.rcpt_to);
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  return query
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/** The breaks of these statements, by statement id, each list by instrument. */
export async function breaksOfStatements(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, PositionBreakTable[]>> {
  const out = new Map<string, PositionBreakTable[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('position_breaks')
    .selectAll()
    .where('statement_id', 'in', ids)
    .orderBy('statement_id')
    .orderBy('instrument')
    .execute();
  for (const row of rows) out.get(row.statement_id)?.push(row);
  return out;
}

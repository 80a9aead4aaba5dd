import { sql, type Kysely } from 'kysely';

// Frozen in time: investors' positions, kept up to date as fills are applied; the statements of
// holdings clients declare from their SGI, and the breaks between a statement and the fills; and an
// index of each subject's open sells. (A partner's `checks.holdings` sits in partners.checks, added
// by the investor-accounts migration.)
//
// A subject's positions at a partner form a book, whose row each change of them locks first. A
// position keeps its signed quantity, its cost and its realised profit or loss (decimal text: a
// quantity times a price can pass 2^63), and its recent fills by clock and trade date, to tell what
// has settled. Positions of the fills applied before this migration are built here, from those fills
// in the order they executed, with the average-cost arithmetic of this version (positions/core).
//
// The open sells' index holds only open sell orders; the holdings check repeats its condition word
// for word (SQLite uses a partial index only for a query that repeats it).
const OPEN_SELLS = sql.raw<boolean>("side = 'sell' and status in ('created', 'routed', 'partially_filled')");

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('position_books')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('statement_id', 'text')
    .addColumn('statement_as_of', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('position_books_pk', ['client_id', 'subject_id', 'rcpt_to'])
    .execute();
  await db.schema
    .createTable('positions')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('qty', 'bigint', (c) => c.notNull())
    .addColumn('cost_cents', 'text', (c) => c.notNull())
    .addColumn('realised_pnl_cents', 'text', (c) => c.notNull())
    .addColumn('unsettled', 'text', (c) => c.notNull())
    .addColumn('statement_as_of', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('positions_pk', ['client_id', 'subject_id', 'rcpt_to', 'instrument'])
    .execute();
  await db.schema
    .createTable('position_statements')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .addColumn('holdings', 'text', (c) => c.notNull())
    .addColumn('previous_statement_id', 'text')
    .addColumn('replaces', 'text')
    .addColumn('replaced_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // A book's statements by date (the latest before a date), and a client's newest first.
  await db.schema.createIndex('position_statements_book').on('position_statements').columns(['client_id', 'subject_id', 'rcpt_to', 'as_of', 'id']).execute();
  await db.schema.createIndex('position_statements_client').on('position_statements').columns(['client_id', 'id']).execute();
  await db.schema
    .createTable('position_breaks')
    .addColumn('statement_id', 'text', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('statement_qty', 'bigint', (c) => c.notNull())
    .addColumn('expected_qty', 'bigint', (c) => c.notNull())
    .addColumn('difference_qty', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('position_breaks_pk', ['statement_id', 'instrument'])
    .execute();

  await db.schema.createIndex('orders_open_sells').on('orders').columns(['client_id', 'subject_id', 'rcpt_to', 'instrument']).where(OPEN_SELLS).execute();

  await backfill(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_open_sells').execute();
  for (const table of ['position_breaks', 'position_statements', 'positions', 'position_books']) await db.schema.dropTable(table).execute();
}

interface Built {
  key: [string, string, string, string];
  qty: bigint;
  cost: bigint;
  realised: bigint;
  unsettled: [string | null, string, number][];
}

const HORIZON_MS = 31 * 86_400_000;

/** The positions of the fills applied so far, in the order they executed, a page of fills at a time. */
async function backfill(db: Kysely<any>): Promise<void> {
  const positions = new Map<string, Built>();
  let after: [number, string, number] | null = null;
  for (;;) {
    let query = db
      .selectFrom('order_fills as f')
      .innerJoin('orders as o', 'o.id', 'f.order_id')
      .select(['o.client_id', 'o.subject_id', 'o.rcpt_to', 'o.instrument', 'o.side', 'o.test_clock_id', 'f.order_id', 'f.seq', 'f.fill_qty', 'f.fill_price_cents', 'f.executed_at'])
      .orderBy('f.executed_at')
      .orderBy('f.order_id')
      .orderBy('f.seq')
      .limit(5000);
    if (after !== null) {
      const [at, order, seq] = after;
      query = query.where((eb: any) => eb(eb.refTuple('f.executed_at', 'f.order_id', 'f.seq'), '>', eb.tuple(at, order, seq)));
    }
    const rows: any[] = await query.execute();
    if (rows.length === 0) break;
    for (const r of rows) {
      const key: Built['key'] = [r.client_id, r.subject_id, r.rcpt_to, r.instrument];
      const id = key.join('\u0000');
      const p = positions.get(id) ?? { key, qty: 0n, cost: 0n, realised: 0n, unsettled: [] };
      trade(p, r.side === 'buy' ? BigInt(r.fill_qty) : -BigInt(r.fill_qty), BigInt(r.fill_price_cents));
      const executedAt = Number(r.executed_at);
      const day = new Date(executedAt).toISOString().slice(0, 10);
      const oldest = new Date(executedAt - HORIZON_MS).toISOString().slice(0, 10);
      const clock: string | null = r.test_clock_id ?? null;
      const signed = (r.side === 'buy' ? 1 : -1) * Number(r.fill_qty);
      const kept = p.unsettled.filter(([c, d]) => !(c === clock && d < oldest));
      const same = kept.find(([c, d]) => c === clock && d === day);
      if (same !== undefined) same[2] += signed;
      else kept.push([clock, day, signed]);
      p.unsettled = kept.filter(([, , q]) => q !== 0).sort((a, b) => ((a[0] ?? '') + a[1] < (b[0] ?? '') + b[1] ? -1 : 1));
      positions.set(id, p);
    }
    const last = rows[rows.length - 1];
    after = [Number(last.executed_at), last.order_id, Number(last.seq)];
  }
  const now = Date.now();
  const books = new Set<string>();
  for (const p of positions.values()) {
    const [client_id, subject_id, rcpt_to, instrument] = p.key;
    const book = [client_id, subject_id, rcpt_to].join('\u0000');
    if (!books.has(book)) {
      books.add(book);
      await db.insertInto('position_books').values({ client_id, subject_id, rcpt_to, statement_id: null, statement_as_of: null, created_at: now, updated_at: now }).execute();
    }
    await db
      .insertInto('positions')
      .values({ client_id, subject_id, rcpt_to, instrument, qty: Number(p.qty), cost_cents: p.cost.toString(), realised_pnl_cents: p.realised.toString(), unsettled: JSON.stringify(p.unsettled), statement_as_of: null, updated_at: now })
      .execute();
  }
}

/** The average-cost method of this version (positions/core/average-cost.ts), on a position being built. */
function trade(p: Built, delta: bigint, price: bigint): void {
  const sign = (n: bigint) => (n < 0n ? -1n : n > 0n ? 1n : 0n);
  const abs = (n: bigint) => (n < 0n ? -n : n);
  if (p.qty === 0n || sign(p.qty) === sign(delta)) {
    p.qty += delta;
    p.cost += delta * price;
    return;
  }
  const closed = abs(delta) < abs(p.qty) ? abs(delta) : abs(p.qty);
  const closedCost = closed === abs(p.qty) ? p.cost : sign(p.cost) * ((2n * abs(p.cost) * closed + abs(p.qty)) / (2n * abs(p.qty)));
  p.realised += sign(p.qty) * closed * price - closedCost;
  const opened = abs(delta) - closed;
  p.cost -= closedCost;
  p.qty += sign(delta) * closed;
  if (opened > 0n) {
    p.qty = sign(delta) * opened;
    p.cost = sign(delta) * opened * price;
  }
}

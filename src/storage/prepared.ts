import { CompiledQuery, sql as rawSql, type Compilable, type Insertable, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A statement prepared once and run at once, synchronously, on a connection chosen by its handle. */
export type DirectStatement = (parameters: readonly unknown[]) => unknown[];

/** Prepares `sql` for direct use; undefined when the statement must take the normal (executor) path. */
export type DirectStatements = (sql: string) => DirectStatement | undefined;

const DIRECT = new WeakMap<object, DirectStatements>();

/**
 * Lets prepared reads on `db` itself (not on a transaction of it) bypass the query executor: the
 * embedded database answers them synchronously from its read-only connection.
 */
export function registerDirectReads(db: Kysely<Database>, reads: DirectStatements): void {
  DIRECT.set(db, reads);
}

const TRANSACTION_STATEMENTS = new WeakMap<object, DirectStatements>();

/**
 * Lets every prepared statement run in a transaction of `db` opened by transaction() bypass the query
 * executor: on the embedded database a transaction owns the writer connection from its start to its
 * end, and better-sqlite3 runs the statement at once. Kysely's executor costs more than the SQLite
 * work of a point query or a one-row insert (its connection provider, result transformation and
 * several promise hops), and a request on the order path runs about a dozen statements in its
 * transaction.
 */
export function registerDirectStatements(db: Kysely<Database>, statements: DirectStatements): void {
  TRANSACTION_STATEMENTS.set(db, statements);
}

/** `db.transaction().execute(work)`, with prepared statements run directly where `db` allows it. */
export function transaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const statements = TRANSACTION_STATEMENTS.get(db);
  return db.transaction().execute((trx) => {
    if (statements !== undefined) DIRECT.set(trx, statements);
    return work(trx);
  });
}

/** Runs a statement without arguments (savepoints and the like), directly when `db` allows it. */
export async function runStatement(db: Kysely<Database>, text: string): Promise<void> {
  const direct = DIRECT.get(db)?.(text);
  if (direct !== undefined) direct([]);
  else await rawSql.raw(text).execute(db);
}

class Slot {
  constructor(readonly index: number) {}
}

interface Compiled {
  sql: string;
  /** For each placeholder: the index of the argument it takes, or a constant of the query. */
  parameters: readonly (Slot | unknown)[];
}

/**
 * A query of the hot paths, built and compiled once per dialect and then run with new arguments:
 * building and compiling a Kysely query costs more than running a point query on SQLite (measured on
 * the authenticated read: 11 µs of builder and executor against 2 µs of SQLite). The query is written
 * with the ordinary builder, so it is type-checked like every other; its arguments are placeholders
 * recorded at compile time. Arguments must be plain values compared or assigned as they are (no
 * arrays for `in`, no null for `is`), since the SQL is fixed by the first build.
 */
export class PreparedQuery<Args extends unknown[], Row> {
  readonly #compiled = new WeakMap<object, Compiled>();
  /** Per database handle or transaction: its direct statement for this query, or null when it has none. */
  readonly #direct = new WeakMap<object, DirectStatement | null>();

  constructor(
    private readonly arity: Args['length'],
    private readonly build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>,
  ) {}

  #compile(db: Kysely<Database>): Compiled {
    // One compilation per dialect adapter (SQLite and PostgreSQL differ in placeholders and quoting).
    const adapter = db.getExecutor().adapter;
    let compiled = this.#compiled.get(adapter);
    if (compiled === undefined) {
      const slots = Array.from({ length: this.arity }, (_, i) => new Slot(i)) as unknown as Args;
      const query = this.build(db, ...slots).compile();
      compiled = { sql: query.sql, parameters: query.parameters };
      const used = new Set(compiled.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.index));
      if (used.size !== this.arity) throw new Error(`prepared query uses ${used.size} of its ${this.arity} arguments: ${query.sql}`);
      this.#compiled.set(adapter, compiled);
    }
    return compiled;
  }

  async execute(db: Kysely<Database>, ...args: Args): Promise<Row[]> {
    const { sql, parameters } = this.#compile(db);
    const values = parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    const direct = this.#directStatement(db, sql);
    if (direct !== null) return direct(values) as Row[];
    return (await db.executeQuery<Row>(CompiledQuery.raw(sql, values))).rows as Row[];
  }

  async first(db: Kysely<Database>, ...args: Args): Promise<Row | undefined> {
    return (await this.execute(db, ...args))[0];
  }

  #directStatement(db: Kysely<Database>, sql: string): DirectStatement | null {
    let direct = this.#direct.get(db);
    if (direct === undefined) {
      direct = DIRECT.get(db)?.(sql) ?? null;
      this.#direct.set(db, direct);
    }
    return direct;
  }
}

/**
 * An insert of whole rows into one table, prepared like PreparedQuery. The columns are those of the
 * first row inserted; every row type given here lists all its columns (nullable ones as null), so
 * each row binds the same columns. `runMany` inserts several rows per statement, prepared once for
 * each number of rows it meets (at most `chunk`): building a multi-row INSERT with Kysely costs
 * several microseconds a row, more than SQLite takes to insert it.
 */
export class PreparedInsert<T extends keyof Database & string> {
  #columns: readonly string[] | null = null;
  /** By number of rows. */
  readonly #queries = new Map<number, PreparedQuery<unknown[], unknown>>();

  /** `chunk`: rows per statement at most, within both engines' limits on bound parameters. */
  constructor(
    private readonly table: T,
    private readonly chunk = 1,
  ) {}

  async run(db: Kysely<Database>, row: Insertable<Database[T]>): Promise<void> {
    const columns = (this.#columns ??= Object.keys(row as object));
    await this.#query(columns, 1).execute(db, ...this.#values(row, columns, []));
  }

  async runMany(db: Kysely<Database>, rows: readonly Insertable<Database[T]>[]): Promise<void> {
    if (rows.length === 0) return;
    const columns = (this.#columns ??= Object.keys(rows[0] as object));
    for (let from = 0; from < rows.length; from += this.chunk) {
      const n = Math.min(this.chunk, rows.length - from);
      const args: unknown[] = [];
      for (let r = from; r < from + n; r++) this.#values(rows[r] as Insertable<Database[T]>, columns, args);
      await this.#query(columns, n).execute(db, ...args);
    }
  }

  /** Appends the row's values to `out`, in the order of `columns`. */
  #values(row: Insertable<Database[T]>, columns: readonly string[], out: unknown[]): unknown[] {
    const values = row as Record<string, unknown>;
    for (const c of columns) {
      const value = values[c];
      if (value === undefined) throw new Error(`insert into ${this.table}: column ${c} has no value`);
      out.push(value);
    }
    return out;
  }

  #query(columns: readonly string[], n: number): PreparedQuery<unknown[], unknown> {
    let query = this.#queries.get(n);
    if (query === undefined) {
      const width = columns.length;
      query = new PreparedQuery(width * n, (qb, ...args: unknown[]) =>
        qb
          .insertInto(this.table)
          .values(
            Array.from(
              { length: n },
              (_, r) => Object.fromEntries(columns.map((c, i) => [c, args[r * width + i]])) as Insertable<Database[T]>,
            ),
          ),
      );
      this.#queries.set(n, query);
    }
    return query;
  }
}

/**
 * An update of one table's rows by their key, prepared like PreparedQuery once for each set of
 * columns it is given (callers change a handful of such sets). Columns whose value is undefined are
 * left as they are.
 */
export class PreparedUpdate<T extends keyof Database & string> {
  readonly #queries = new Map<string, { columns: string[]; query: PreparedQuery<unknown[], unknown> }>();

  constructor(
    private readonly table: T,
    private readonly key: readonly (keyof Database[T] & string)[],
  ) {}

  /** Sets `changes` on the row whose key columns equal `keyValues` (in the order of `key`). */
  async run(db: Kysely<Database>, keyValues: readonly unknown[], changes: Partial<Database[T]>): Promise<void> {
    const values = changes as Record<string, unknown>;
    const columns = Object.keys(values).filter((c) => values[c] !== undefined);
    const shape = columns.join(',');
    let update = this.#queries.get(shape);
    if (update === undefined) {
      const width = this.key.length;
      const query = new PreparedQuery(width + columns.length, (qb, ...args: unknown[]) => {
        let statement: any = (qb as Kysely<any>)
          .updateTable(this.table as string)
          .set(Object.fromEntries(columns.map((c, i) => [c, args[width + i]])));
        this.key.forEach((column, i) => {
          statement = statement.where(column, '=', args[i]);
        });
        return statement as Compilable<unknown>;
      });
      update = { columns, query };
      this.#queries.set(shape, update);
    }
    await update.query.execute(db, ...keyValues, ...update.columns.map((c) => values[c]));
  }
}

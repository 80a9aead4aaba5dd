/**
 * PostgreSQL schemas reused between the tests of one process. Creating the tables and indexes of a
 * new schema costs PostgreSQL about a third of a second; emptying one that an earlier test used
 * costs a few milliseconds. A schema is reused only when:
 * - a harness function migrated it to the latest version in this process (markMigrated);
 * - every hook of its test has run (its runtimes closed, the processes it started stopped);
 * - its tables, columns, indexes and triggers are still those the migrations make, as first seen in
 *   this process on a schema the migrations had just made.
 * It is then emptied, every table but the migrations' own bookkeeping, in one transaction that skips
 * the foreign-key checks (a superuser's right; without it the schema is not reused). The next test
 * that takes it starts as on a new schema: the runtime finds every migration applied and writes the
 * calendars, fee schedules and sandbox directory into empty tables.
 */
import type { Client } from 'pg';

const emptied: string[] = [];
const migrated = new Set<string>();
/** The shape of a schema the migrations had just made, once one has been seen. */
let latest: Promise<string | null> | undefined;

/** A schema an earlier test of this process used, emptied, if there is one. */
export function takeEmptiedSchema(): string | undefined {
  const schema = emptied.pop();
  if (schema !== undefined) migrated.add(schema);
  return schema;
}

/** Notes that `schema` holds the latest migrations; the first such schema gives the shape to compare with. */
export function markMigrated(url: string, schema: string): void {
  migrated.add(schema);
  latest ??= withClient(url, (client) => shapeOf(client, schema)).catch(() => null);
}

/** Once its test has ended: empties `schema` for the next test, when it is fit for it (see above). */
export async function releaseSchema(url: string, schema: string): Promise<void> {
  if (!migrated.delete(schema) || latest === undefined) return;
  const expected = await latest;
  await withClient(url, async (client) => {
    if (expected === null || (await shapeOf(client, schema)) !== expected) return;
    const { rows } = await client.query<{ name: string }>(
      `select table_name as name from information_schema.tables
        where table_schema = $1 and table_type = 'BASE TABLE' and table_name not in ('kysely_migration', 'kysely_migration_lock')`,
      [schema],
    );
    const deletes = rows.map(({ name }) => `delete from ${quote(schema)}.${quote(name)};`).join(' ');
    await client.query(`begin; set local lock_timeout = '2s'; set local session_replication_role = replica; ${deletes} commit;`);
    emptied.push(schema);
  }).catch(() => undefined);
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The schema's tables, columns, indexes and triggers, its own name left out. */
async function shapeOf(client: Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ line: string }>(
    `select 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as line
       from information_schema.columns where table_schema = $1
     union all
     select 'index ' || tablename || ' ' || indexdef from pg_indexes where schemaname = $1
     union all
     select 'trigger ' || event_object_table || '.' || trigger_name || ' ' || event_manipulation || ' ' || action_statement
       from information_schema.triggers where trigger_schema = $1
     order by line`,
    [schema],
  );
  return rows.map(({ line }) => line.replaceAll(schema, '<schema>')).join('\n');
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: every change to the clients and their secrets is announced on the `cauri_changes`
 * channel, after its transaction commits, so that each process can keep what it read of them until
 * then (Storage.changeMarker). SQLite needs nothing: its data_version tells the same.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create or replace function cauri_announce_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('cauri_changes', tg_table_name);
  return null;
end $$`.execute(db);
  for (const table of ['clients', 'client_secrets']) {
    await sql`create trigger ${sql.raw(`${table}_announce`)} after insert or update or delete or truncate on ${sql.table(table)} for each statement execute function cauri_announce_change()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of ['clients', 'client_secrets']) await sql`drop trigger if exists ${sql.raw(`${table}_announce`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function if exists cauri_announce_change()`.execute(db);
}

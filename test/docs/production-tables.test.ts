import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { DATABASES, openTestStorage } from '../support/harness.js';

// docs/production.md names every table a deployment's database holds (operators grant, back up and
// watch them): the list must be the tables the migrations create, no more, no less.
const doc = readFileSync(new URL('../../../docs/production.md', import.meta.url), 'utf8');

function documentedTables(): string[] {
  const start = doc.indexOf('The tables are');
  const end = doc.indexOf('`kysely_migration_lock`', start) + '`kysely_migration_lock`'.length;
  assert.ok(start >= 0 && end > start, 'docs/production.md lists the tables');
  return [...doc.slice(start, end).matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string).sort();
}

for (const db of DATABASES) {
  test(`${db.name}: the tables docs/production.md lists are the tables of a migrated database`, async (t) => {
    const storage = await openTestStorage(t, db);
    const rows =
      storage.dialect === 'postgres'
        ? await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = ${storage.schema ?? 'public'} and table_type = 'BASE TABLE'`.execute(storage.db)
        : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(storage.db);
    assert.deepEqual(documentedTables(), rows.rows.map((r) => r.name).sort());
  });
}

import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { DATABASES, openUnmigratedStorage } from '../../test/support/harness.js';
import type { Storage } from './database.js';

const postgres = DATABASES.find((d) => d.name === 'postgres');

/** A storage on a fresh schema with one pooled connection, so that every statement runs on the same session. */
async function open(t: TestContext, prepared: boolean): Promise<Storage> {
  const storage = await openUnmigratedStorage(t, postgres!, { poolSize: 1, pgPreparedStatements: prepared });
  await sql`create table things (id integer primary key, name text not null)`.execute(storage.db);
  await sql`insert into things (id, name) values (1, 'one'), (2, 'two')`.execute(storage.db);
  return storage;
}

const byId = (storage: Storage, id: number) => sql<Record<string, unknown>>`select * from things where id = ${id}`.execute(storage.db);

async function preparedStatements(storage: Storage): Promise<string[]> {
  const rows = await sql<{ statement: string }>`select statement from pg_prepared_statements order by statement`.execute(storage.db);
  return rows.rows.map((r) => r.statement);
}

describe('named prepared statements on PostgreSQL', { skip: postgres === undefined ? 'no TEST_DATABASE_URL' : false }, () => {
  test('a statement with parameters is prepared once on its connection and reused; one without stays unprepared', async (t) => {
    const storage = await open(t, true);
    assert.deepEqual((await byId(storage, 1)).rows, [{ id: 1, name: 'one' }]);
    assert.deepEqual((await byId(storage, 2)).rows, [{ id: 2, name: 'two' }]);
    await storage.transact(async (trx) => {
      await sql`update things set name = ${'uno'} where id = ${1}`.execute(trx);
    });
    const statements = await preparedStatements(storage);
    assert.equal(statements.filter((s) => s === 'select * from things where id = $1').length, 1, statements.join('\n'));
    assert.ok(statements.includes('update things set name = $1 where id = $2'), statements.join('\n'));
    assert.ok(!statements.some((s) => s.startsWith('select statement from pg_prepared_statements')), 'no parameters: not prepared');
    assert.deepEqual((await byId(storage, 1)).rows, [{ id: 1, name: 'uno' }]);
  });

  test('off: nothing is prepared', async (t) => {
    const storage = await open(t, false);
    await byId(storage, 1);
    await byId(storage, 2);
    assert.deepEqual(await preparedStatements(storage), []);
  });

  test('a schema change under the running process: the statement is run again unnamed, outside and inside transactions', async (t) => {
    const storage = await open(t, true);
    await byId(storage, 1);
    // Another process (a newer version, migrating) adds a column: the prepared `select *` no longer matches.
    const other = new pg.Client({ connectionString: postgres!.url as string, options: `-c search_path=${storage.schema}` });
    await other.connect();
    try {
      await other.query('alter table things add column extra text');
    } finally {
      await other.end();
    }
    assert.deepEqual((await byId(storage, 2)).rows, [{ id: 2, name: 'two', extra: null }]);
    const inside = await storage.transact(
      async (trx) => (await sql<Record<string, unknown>>`select * from things where id = ${1}`.execute(trx)).rows,
    );
    assert.deepEqual(inside, [{ id: 1, name: 'one', extra: null }]);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DATABASES } from '../support/harness.js';
import { PgWireTap, tapDifference, type TapCounts } from '../support/pg-wire-tap.js';

const postgres = DATABASES.find((d) => d.name === 'postgres');

/**
 * The tap that the order budget's test and the benchmark's census read PostgreSQL's side of the
 * conversation with: each count checked on statements whose answers are known.
 */
test('the wire tap counts what PostgreSQL answered: statements, round trips, syncs, transaction blocks', {
  skip: postgres === undefined ? 'TEST_DATABASE_URL is needed' : false,
}, async (t) => {
  const tap = await PgWireTap.start(postgres!.url as string);
  t.after(() => tap.close());
  const pipelined = new pg.Client({ connectionString: tap.through(postgres!.url as string), pipeline: true } as pg.ClientConfig);
  await pipelined.connect();
  t.after(() => pipelined.end());
  assert.deepEqual(tap.snapshot(), { connections: 1, unreadable: 0, statements: 0, roundTrips: 0, syncs: 0, transactions: 0 }, 'the logon');

  const sent = async (what: () => Promise<unknown>): Promise<Omit<TapCounts, 'connections' | 'unreadable'>> => {
    const before = tap.snapshot();
    await what();
    // The answer reaches the client through the tap: the tap has read it by then.
    const { statements, roundTrips, syncs, transactions } = tapDifference(tap.snapshot(), before);
    return { statements, roundTrips, syncs, transactions };
  };

  assert.deepEqual(
    await sent(() => pipelined.query('select 1')),
    { statements: 1, roundTrips: 1, syncs: 1, transactions: 0 },
    'simple query',
  );
  assert.deepEqual(
    await sent(() => pipelined.query('select $1::int as n', [7])),
    { statements: 1, roundTrips: 1, syncs: 1, transactions: 0 },
    'extended protocol',
  );
  assert.deepEqual(
    await sent(async () => {
      await pipelined.query('begin');
      await pipelined.query('select 1');
      await pipelined.query('commit');
    }),
    { statements: 3, roundTrips: 3, syncs: 3, transactions: 1 },
    'a transaction, one statement at a time',
  );
  assert.deepEqual(
    await sent(() => Promise.all([pipelined.query('begin'), pipelined.query('select $1::int', [1]), pipelined.query('commit')])),
    { statements: 3, roundTrips: 1, syncs: 3, transactions: 1 },
    'the same transaction sent at once: one round trip',
  );
  // Sent at once: a client that sends its ROLLBACK when the error arrives may send it before the
  // ReadyForQuery behind the error, which is then one round trip less on the wire.
  assert.deepEqual(
    await sent(() =>
      Promise.all([
        pipelined.query('begin'),
        assert.rejects(pipelined.query('select 1/0'), /division by zero/),
        pipelined.query('rollback'),
      ]),
    ),
    { statements: 3, roundTrips: 1, syncs: 3, transactions: 1 },
    'a failed statement is answered and ends nothing; its rollback ends the block',
  );
  assert.deepEqual(
    await sent(() =>
      Promise.all([pipelined.query('select 1'), pipelined.query('select $1::int', [2]), pipelined.query('select $1::text', ['x'])]),
    ),
    { statements: 3, roundTrips: 1, syncs: 3, transactions: 0 },
    'statements on their own, sent at once',
  );
  assert.deepEqual(
    await sent(() => pipelined.query('select 1; select 2')),
    { statements: 2, roundTrips: 1, syncs: 1, transactions: 0 },
    'two statements in one simple Query: one ReadyForQuery answers both',
  );
  // A second client: connections and counts add up across them.
  const second = new pg.Client({ connectionString: tap.through(postgres!.url as string) });
  await second.connect();
  await second.query('select 1');
  await second.end();
  assert.equal(tap.counts.connections, 2);
  assert.equal(tap.counts.unreadable, 0);
});

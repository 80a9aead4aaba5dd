import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, listen, startRuntimeIn, testEnvironment } from '../support/harness.js';
import { KYC2_REQUEST, apiClient } from '../support/api.js';
import { SANDBOX_PARTNERS } from '../../src/partners/sandbox-seed.js';
import { PgWireTap, tapDifference } from '../support/pg-wire-tap.js';

const postgres = DATABASES.find((d) => d.name === 'postgres');
const BAOBAB = SANDBOX_PARTNERS.find((p) => p.name.startsWith('Baobab'))?.id;

/**
 * The budget of docs/performance.md: what one `POST /v1/orders` may send to PostgreSQL on its request
 * path. The sandbox partners keep their own state in the service's database (one journal write per
 * call, in the round trips counted here: one statement, committed on its own, no transaction opened);
 * a partner reached over FIX writes nothing there.
 *
 * The service reaches PostgreSQL through a tap that reads the protocol, so the budget is held to what
 * PostgreSQL answered (test/support/pg-wire-tap.ts), and the service's own counters
 * (`cauri_db_wire_total`) are checked against it.
 */
const MAX_ROUND_TRIPS = 6;
const MAX_TRANSACTIONS = 2;

test('one POST /v1/orders on PostgreSQL stays within its round-trip and transaction budget', {
  skip: postgres === undefined ? 'TEST_DATABASE_URL is needed' : false,
}, async (t) => {
  const tap = await PgWireTap.start(postgres!.url as string);
  t.after(() => tap.close());
  const e = testEnvironment(t, postgres!, { CAURI_WORKERS: 'none', DATABASE_URL: tap.through(postgres!.url as string) });
  const runtime = await startRuntimeIn(t, e);
  const api = await apiClient(runtime, await listen(runtime));
  const attestation = ((await (await api.post('/v1/kyc/attestations', KYC2_REQUEST)).json()) as { id: string }).id;
  const order = (side: 'buy' | 'sell') => ({ rcpt_to: BAOBAB, kyc_attestation_id: attestation, instrument: 'KOLA.BRVM', side, qty: 2 });
  // The first order of the process loads what it keeps (reference data, the client's status).
  assert.equal((await api.post('/v1/orders', order('buy'))).status, 201);

  const journalWrites = async () =>
    Number(
      (
        await runtime.storage.db
          .selectFrom('sandbox_journal')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  // Statements pipelined behind one another count as one round trip only while the earlier ones are
  // still unanswered: on a loaded machine the process can be slower than PostgreSQL between two
  // statements of one step, and the step then counts twice. The budget bounds what the code sends, so
  // each side is measured up to three times and its best order is the one held to the budget.
  const measure = async (side: 'buy' | 'sell') => {
    const journalBefore = await journalWrites();
    const before = runtime.storage.wireStats();
    const tapped = tap.snapshot();
    const res = await api.post('/v1/orders', order(side));
    const after = runtime.storage.wireStats();
    const onWire = tapDifference(tap.snapshot(), tapped);
    const journal = (await journalWrites()) - journalBefore;
    const body = (await res.json()) as { status: string };
    assert.equal(res.status, 201);
    assert.equal(body.status, 'routed', 'handed over within the request');
    assert.ok(before !== null && after !== null);
    assert.equal(journal, 1, 'the sandbox partner journals the submit');
    const counted = {
      statements: after.statements - before.statements,
      roundTrips: after.roundTrips - before.roundTrips,
      transactions: after.transactions - before.transactions,
    };
    // What the service counted is what PostgreSQL answered.
    assert.equal(counted.statements, onWire.statements, `${side}: statements counted by the service and answered`);
    assert.equal(counted.transactions, onWire.transactions, `${side}: transactions counted by the service and ended`);
    return { statements: onWire.statements, roundTrips: onWire.roundTrips, transactions: onWire.transactions, counted: counted.roundTrips };
  };
  for (const side of ['buy', 'sell'] as const) {
    const tries: Awaited<ReturnType<typeof measure>>[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const sent = await measure(side);
      tries.push(sent);
      t.diagnostic(`${side}: ${JSON.stringify(sent)}`);
      // Transactions do not depend on timing: every order is held to that budget.
      assert.ok(sent.transactions <= MAX_TRANSACTIONS, `${side}: ${sent.transactions} transactions, at most ${MAX_TRANSACTIONS}`);
      if (sent.roundTrips <= MAX_ROUND_TRIPS) break;
    }
    const best = tries.reduce((a, b) => (b.roundTrips < a.roundTrips ? b : a));
    assert.ok(
      best.roundTrips <= MAX_ROUND_TRIPS,
      `${side}: ${best.roundTrips} round trips (${best.statements} statements) at best of ${tries.length}, at most ${MAX_ROUND_TRIPS}`,
    );
  }
});

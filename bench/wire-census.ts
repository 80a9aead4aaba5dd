import { randomUUID } from 'node:crypto';
import { PgWireTap, tapDifference, type TapCounts } from '../test/support/pg-wire-tap.js';
import { startPostgresService } from './orders.js';
import { readWire } from './wire.js';
import type { ServerProcess } from './processes.js';

/** Orders the census places, one at a time. */
const CENSUS_ORDERS = 200;

type Sent = Pick<TapCounts, 'statements' | 'roundTrips' | 'syncs' | 'transactions'>;

function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  const [low, high] = [sorted[0] as number, sorted[sorted.length - 1] as number];
  return low === high ? `${median}` : `${median} (from ${low} to ${high})`;
}

/**
 * What one order sends to PostgreSQL on its request path, counted on the wire rather than by the
 * service: a fresh service on a database of its own, with no worker running (so nothing but the
 * requests talks to the database), reaches the server through a relay that reads the protocol
 * (test/support/pg-wire-tap.ts), and places CENSUS_ORDERS orders of the scenario one at a time.
 * Returns the note that reports it, or null without a PostgreSQL server.
 */
export async function pgWireCensus(
  baseEnv: Record<string, string>,
  cwd: string,
  servers: ServerProcess[],
  cli: string,
): Promise<string | null> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') return null;
  const tap = await PgWireTap.start(serverUrl);
  try {
    const census = await startPostgresService(baseEnv, cwd, servers, cli, [], {
      env: { CAURI_WORKERS: 'none' },
      databaseUrl: (url) => tap.through(url),
    });
    if (census === null) return null;
    try {
      const { service, token, body } = census.orders;
      const sent: Sent[] = [];
      const countedBefore = await readWire(service);
      const tappedBefore = tap.snapshot();
      for (let i = 0; i < CENSUS_ORDERS; i++) {
        const before = tap.snapshot();
        const res = await fetch(`${service}/v1/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body,
        });
        const answer = (await res.json()) as { status?: string };
        if (res.status !== 201 || answer.status !== 'routed') {
          throw new Error(`census order ${i + 1}: ${res.status} ${JSON.stringify(answer)}, expected 201 routed`);
        }
        const { statements, roundTrips, syncs, transactions } = tapDifference(tap.snapshot(), before);
        sent.push({ statements, roundTrips, syncs, transactions });
      }
      const countedAfter = await readWire(service);
      // The whole window, the reads of the service's counters included (/metrics reads the database).
      const window = tapDifference(tap.snapshot(), tappedBefore);
      const total = (key: keyof Sent) => window[key];
      const counted = (kind: keyof typeof countedAfter) => countedAfter[kind] - countedBefore[kind];
      const agree =
        counted('statements') === total('statements') && counted('transactions') === total('transactions')
          ? 'the same statements and transactions as counted on the wire'
          : `${counted('statements')} statements and ${counted('transactions')} transactions in all, against ${total('statements')} and ${total('transactions')} on the wire in the same window`;
      return (
        `Counted on the wire, as PostgreSQL answered: a fresh service on a database of its own, with no worker running, reached the server through a relay that reads the protocol ` +
        `(a statement for each CommandComplete or error, a round trip for each time the service sent while nothing it had sent was unanswered, a transaction for each block that a ReadyForQuery reports ended), ` +
        `and placed ${CENSUS_ORDERS} of these orders one at a time. Each order's request path: ${spread(sent.map((s) => s.statements))} statements, ` +
        `${spread(sent.map((s) => s.roundTrips))} round trips, ${spread(sent.map((s) => s.syncs))} Syncs answered (one write of PostgreSQL's each), ${spread(sent.map((s) => s.transactions))} transactions (the median, and the range where orders differed). ` +
        `The service's own \`cauri_db_wire_total\` over the same orders: ${agree}; its round trips, ${counted('round_trips')} against ${total('roundTrips')} on the wire (the reads of its counters included).`
      );
    } finally {
      await census.drop();
    }
  } finally {
    await tap.close();
  }
}

import { CompiledQuery, Kysely, type DatabaseConnection, type Dialect, type Driver } from 'kysely';
import type { Database } from './schema.js';
import { discardAtCommit, takeAtCommit } from './at-commit.js';

/** A transaction's handle never opens or closes connections itself. */
const NO_DRIVER: Driver = {
  init: async () => undefined,
  acquireConnection: async () => {
    throw new Error('a transaction cannot open a connection');
  },
  beginTransaction: async () => undefined,
  commitTransaction: async () => undefined,
  rollbackTransaction: async () => undefined,
  releaseConnection: async () => undefined,
  destroy: async () => undefined,
};

/**
 * Runs `work` in a PostgreSQL transaction on one pooled connection. Unlike Kysely's own transactions,
 * statements that `work` issues without waiting for each other are sent at once (the pool's clients
 * pipeline them: one round trip), and the writes registered with `atCommit` go out together with
 * COMMIT. With BEGIN deferred to the first statement (WirePool), a transaction of one batch of
 * statements costs one round trip.
 */
export async function pgTransact<T>(db: Kysely<Database>, dialect: Dialect, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.getExecutor().provideConnection(async (connection: DatabaseConnection) => {
    const executor = db.getExecutor().withConnectionProvider({ provideConnection: (consumer) => consumer(connection) });
    const trx = new Kysely<Database>({ config: { dialect }, driver: NO_DRIVER, executor, dialect } as never);
    await connection.executeQuery(CompiledQuery.raw('begin'));
    try {
      const result = await work(trx);
      const writes = takeAtCommit(trx).map((write) => write());
      const committed = connection.executeQuery(CompiledQuery.raw('commit'));
      // A failed write makes PostgreSQL answer the COMMIT behind it with a rollback: its error is the outcome.
      const settled = await Promise.allSettled(writes);
      await committed;
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return result;
    } catch (error) {
      discardAtCommit(trx, error);
      await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
      throw error;
    }
  });
}

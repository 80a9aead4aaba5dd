import type { Kysely } from 'kysely';
import { runStatement } from './prepared.js';

interface Pending {
  write: () => Promise<unknown>;
  discard: (error: unknown) => void;
}

const PENDING = new WeakMap<object, Pending[]>();

/**
 * Registers a write of the transaction `trx` whose answer nothing in the transaction waits for: it
 * is sent when the transaction's work is done, together with COMMIT (on PostgreSQL in the same round
 * trip; on SQLite at the end of the unit, before its commit). If it fails, the transaction fails as
 * if the work had thrown. The promise returned settles with the write (rejected too when the work
 * failed and the write was never sent); await it only after the transaction, never inside it. Used
 * for the last writes of a use case (its rows, its events, the key's final response).
 */
export function atCommit<T>(trx: Kysely<any>, write: () => Promise<T>): Promise<T> {
  let settle!: { resolve: (value: T) => void; reject: (error: unknown) => void };
  const done = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  // Awaiting it is optional.
  done.catch(() => undefined);
  const entry: Pending = {
    write: () =>
      write().then(settle.resolve, (error: unknown) => {
        settle.reject(error);
        throw error;
      }),
    discard: settle.reject,
  };
  const pending = PENDING.get(trx);
  if (pending === undefined) PENDING.set(trx, [entry]);
  else pending.push(entry);
  return done;
}

/** The writes registered on `trx`, removed from it. */
export function takeAtCommit(trx: Kysely<any>): (() => Promise<unknown>)[] {
  const pending = PENDING.get(trx) ?? [];
  PENDING.delete(trx);
  return pending.map((p) => p.write);
}

/**
 * Sends the writes registered on `trx` now, together, and waits for them: for a transaction whose
 * next statements must see them. If one fails, the error is thrown (the transaction must fail).
 */
export async function flushAtCommit(trx: Kysely<any>): Promise<void> {
  const settled = await Promise.allSettled(takeAtCommit(trx).map((write) => write()));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** Drops the writes registered on `trx` (its work failed): each one's promise rejects with `error`. */
export function discardAtCommit(trx: Kysely<any>, error: unknown): void {
  const pending = PENDING.get(trx) ?? [];
  PENDING.delete(trx);
  for (const p of pending) p.discard(error);
}

/**
 * Runs `work` in a savepoint of the open transaction `trx`. When it succeeds, the writes it
 * registered with `atCommit` are sent before the savepoint is released (they belong to it); when it
 * throws, its statements and those writes are undone and the error is thrown on, while the
 * transaction and the writes registered before stay as they were. `name` must be a plain SQL
 * identifier.
 */
export async function inSavepoint<T>(trx: Kysely<any>, name: string, work: () => Promise<T>): Promise<T> {
  const outer = PENDING.get(trx);
  PENDING.delete(trx);
  try {
    // Sent without waiting: on PostgreSQL it travels with the work's first statements, and the
    // registered writes travel together (statements not waited for go out at once), as at COMMIT.
    const opened = runStatement(trx, `savepoint ${name}`);
    opened.catch(() => undefined);
    try {
      const value = await work();
      await opened;
      await flushAtCommit(trx);
      await runStatement(trx, `release savepoint ${name}`);
      return value;
    } catch (error) {
      discardAtCommit(trx, error);
      await opened.catch(() => undefined);
      await runStatement(trx, `rollback to savepoint ${name}`);
      await runStatement(trx, `release savepoint ${name}`);
      throw error;
    }
  } finally {
    if (outer !== undefined) PENDING.set(trx, outer);
  }
}

import type { Kysely } from 'kysely';
import { transaction } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import { recordAttempt } from './delivery.repository.js';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookMessageTable } from './webhook.table.js';

/** Attempts recorded in one transaction at most. */
export const RECORD_BATCH = 256;

/** An attempt and the delivery's state after it, to be written under the delivery's lease. */
export interface AttemptRecord {
  attemptsBefore: number;
  changes: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'first_attempt_at' | 'next_attempt_at' | 'last_attempt_at' | 'updated_at'>;
  attempt: WebhookAttemptRow;
  /** The body, to be stored with the record: the attempt failed and its body was not stored yet. */
  message: WebhookMessageTable | null;
}

/** A record waiting for the transaction that writes it, and the promise of its caller. */
export interface PendingRecord extends AttemptRecord {
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Attempts waiting to be recorded with the others that completed meanwhile, so that a durable
 * commit (an fsync on SQLite) is shared by many attempts rather than paid by each.
 */
export class RecordQueue {
  #waiting: PendingRecord[] = [];

  get size(): number {
    return this.#waiting.length;
  }

  /** Queues a record; resolves once committed (false: the lease had lapsed, nothing written). */
  add(record: AttemptRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ ...record, resolve, reject });
    });
  }

  /** The oldest records, at most RECORD_BATCH, taken off the queue. */
  take(): PendingRecord[] {
    return this.#waiting.splice(0, RECORD_BATCH);
  }
}

/** Writes the records of `batch` in `trx`; for each, whether it was written (its lease was still held by `owner`). */
export async function recordIn(trx: Kysely<Database>, owner: string, batch: readonly AttemptRecord[]): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const r of batch) out.push(await recordAttempt(trx, owner, r.attemptsBefore, r.changes, r.attempt, r.message));
  return out;
}

/** Each record of a batch whose transaction failed, alone, so that one bad record does not take the others with it. */
export async function recordAlone(db: Kysely<Database>, owner: string, batch: readonly PendingRecord[]): Promise<void> {
  for (const r of batch) {
    try {
      r.resolve(await transaction(db, (trx) => recordIn(trx, owner, [r]).then(([recorded]) => recorded === true)));
    } catch (error) {
      r.reject(error);
    }
  }
}

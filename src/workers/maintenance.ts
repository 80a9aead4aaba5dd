import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { purgeExpired } from '../idempotency/idempotency.repository.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Database } from '../storage/schema.js';
import { PeriodicTask } from './periodic.js';

/**
 * Periodic housekeeping, safe on every process: removes idempotency records older than 24 hours and
 * rotates a signing key a day before its planned end.
 */
export class MaintenanceWorker {
  readonly #loop: PeriodicTask;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    log: FastifyBaseLogger,
    intervalMs = 10 * 60 * 1000,
  ) {
    this.#loop = new PeriodicTask('maintenance', () => this.runOnce(), intervalMs, log);
  }

  async runOnce(): Promise<{ idempotencyRecords: number; rotated: string[] }> {
    const rotated: string[] = [];
    for (const purpose of ['attestation', 'token'] as const) if (await this.keys.rotateIfDue(purpose)) rotated.push(purpose);
    return { idempotencyRecords: await purgeExpired(this.db, this.clock.now().getTime()), rotated };
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}

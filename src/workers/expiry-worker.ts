import type { FastifyBaseLogger } from 'fastify';
import type { Router } from '../routing/router.js';
import { PeriodicTask } from './periodic.js';

/**
 * The expiry loop: cancels, with reason `expired`, the day orders still open at their exchange's
 * close and the gtd orders at the close of their expire date. Runs in every process that has
 * workers; each due order is claimed once in the database (SKIP LOCKED on PostgreSQL, a conditional
 * update on SQLite), so processes running together, or one restarted, expire it once and emit
 * `order.cancelled` once.
 */
export class ExpiryWorker {
  readonly #loop: PeriodicTask;

  constructor(
    private readonly router: Router,
    log: FastifyBaseLogger,
    intervalMs = 1000,
  ) {
    this.#loop = new PeriodicTask('expiry tick', () => this.tick(), intervalMs, log);
  }

  /** Expires what is due now, in batches until none is left. */
  async tick(): Promise<void> {
    while ((await this.router.expireDue()) > 0);
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}

import type { FastifyBaseLogger } from 'fastify';
import type { OrderExpiry } from '../orders/use-cases/expire-orders.js';
import { PeriodicTask } from './periodic.js';

/**
 * The expiry loop: runs the expiry use case (orders/use-cases/expire-orders.ts) every second, in every
 * process that has workers, in batches until nothing is due.
 */
export class ExpiryWorker {
  readonly #loop: PeriodicTask;

  constructor(
    private readonly expiry: OrderExpiry,
    log: FastifyBaseLogger,
    intervalMs = 1000,
  ) {
    this.#loop = new PeriodicTask('expiry tick', () => this.tick(), intervalMs, log);
  }

  /** Expires what is due now, in batches until none is left. */
  async tick(): Promise<void> {
    while ((await this.expiry.expireDue()) > 0);
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}

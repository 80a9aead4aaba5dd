import type { FastifyBaseLogger } from 'fastify';
import type { Router } from '../routing/router.js';
import { PeriodicTask } from './periodic.js';

/**
 * The routing loop: hands over due orders, retries cancels, and applies partners' execution reports.
 * Runs in every process that has workers; leases in the database keep two processes from acting on
 * the same order or reading the same partner's log at once.
 */
export class RoutingWorker {
  readonly #loop: PeriodicTask;

  constructor(
    private readonly router: Router,
    log: FastifyBaseLogger,
    intervalMs = 250,
  ) {
    this.#loop = new PeriodicTask('routing tick', () => this.tick(), intervalMs, log);
  }

  async tick(): Promise<void> {
    await this.router.routeDue();
    await this.router.pollReports();
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}

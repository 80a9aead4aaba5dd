import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { PeriodicTask } from './periodic.js';
import type { AuditService, BuildOutcome } from '../audit/audit.service.js';

/**
 * The daily snapshot loop: builds every closed day not built yet (yesterday, shortly after 00:00
 * UTC, and any day missed while no process ran, back to the first order's day), then advances
 * anchoring. Safe on every process: the day's row and its lease elect one builder.
 */
export class SnapshotWorker {
  readonly #loop: PeriodicTask;

  constructor(
    private readonly audit: AuditService,
    private readonly clock: Clock,
    log: FastifyBaseLogger,
    intervalMs = 30_000,
  ) {
    this.#loop = new PeriodicTask('audit snapshot pass', () => this.runOnce(), intervalMs, log);
  }

  /** One pass at `now`: build what is due, then one anchoring step per pending snapshot. */
  async runOnce(now: Date = this.clock.now()): Promise<{ built: BuildOutcome[]; anchoring: { date: string; state: string }[] }> {
    const built = await this.audit.catchUp(now.getTime());
    const anchoring = await this.audit.advanceAnchoring(now.getTime());
    return { built, anchoring };
  }

  /** Starts the loop; the first pass runs at once (start-up catch-up). */
  start(): void {
    this.#loop.start(0);
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}

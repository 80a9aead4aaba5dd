import type { FastifyBaseLogger } from 'fastify';

/**
 * Runs a task again and again: the next run is scheduled once the previous one has finished, so runs
 * never overlap, and `stop()` waits for a run in progress. A failed run is logged and the loop goes
 * on. The timer does not keep the process alive.
 */
export class PeriodicTask {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = true;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts the loop; the first run comes after `firstDelayMs` (0: at once). */
  start(firstDelayMs = this.intervalMs): void {
    this.#stopped = false;
    this.#schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.run()
        .then(() => undefined)
        .catch((error: unknown) => this.log.error({ err: error }, `${this.name} failed`))
        .finally(() => {
          this.#running = null;
          this.#schedule(this.intervalMs);
        });
    }, delayMs);
    this.#timer.unref();
  }
}

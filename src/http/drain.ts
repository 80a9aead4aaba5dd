import type { FastifyInstance } from 'fastify';

/**
 * The shutdown of an HTTP process, seen from its requests (docs/production.md, "Stopping a
 * process"). Once draining, readiness answers 503 so that the load balancer stops sending new
 * requests, and every response asks its client to close the connection, so that kept-alive
 * connections move to other processes; requests are otherwise served as before until the listener
 * closes. `close` is the whole sequence.
 */
export class Drain {
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  begin(): void {
    this.#draining = true;
  }

  /**
   * Drains `app`: not ready at once, still serving for `delayMs` (the time a load balancer takes to
   * see /readyz fail), then no new connection, while the requests in flight finish. Past `timeoutMs`
   * of that, the connections still open are closed (`cut`).
   */
  async close(app: FastifyInstance, delayMs: number, timeoutMs: number): Promise<{ cut: boolean }> {
    this.begin();
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    let cut = false;
    const timer = setTimeout(() => {
      cut = true;
      app.server.closeAllConnections();
    }, timeoutMs);
    try {
      await app.close();
    } finally {
      clearTimeout(timer);
    }
    return { cut };
  }
}

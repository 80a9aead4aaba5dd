import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { createRuntime, type Runtime } from '../../app.js';
import { CliError } from '../output.js';

/** Why the server could not bind, in one line naming the address; null for an unexpected failure. */
export function listenFailure(error: unknown, host: string, port: number): string | null {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch ((error as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return `cannot listen on ${address}: the address is already in use (another process listens there; stop it or set PORT)`;
    case 'EACCES':
      return `cannot listen on ${address}: permission denied (ports below 1024 need privileges; set PORT)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${address}: the address is not one of this machine's (set HOST)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${address}: the host name does not resolve (set HOST)`;
    default:
      return null;
  }
}

/**
 * Closes the runtime on SIGTERM or SIGINT: in-flight requests and worker ticks finish first. On
 * SIGTERM (a supervisor or an orchestrator stopping the process) an HTTP process first stays up,
 * not ready, for CAURI_SHUTDOWN_DELAY_SECONDS, so that its load balancer stops sending it requests
 * before it stops accepting them; SIGINT (Ctrl-C) skips that wait.
 */
function closeOnSignal(runtime: Runtime, http: boolean): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    const drainMs = http && signal === 'SIGTERM' ? runtime.config.shutdownDelaySeconds * 1000 : 0;
    runtime.app.log.info({ signal, drain_ms: drainMs }, 'shutting down');
    runtime.close({ drainMs }).then(
      () => process.exit(0),
      (error: unknown) => {
        runtime.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP API (and, unless CAURI_WORKERS=none, the background workers)')
    .action(async () => {
      const config = loadConfig();
      const runtime = await createRuntime(config);
      let address: string;
      try {
        address = await runtime.app.listen({ host: config.host, port: config.port });
      } catch (error) {
        // The workers already started and the database is open: both are closed before exiting.
        await runtime.close();
        const reason = listenFailure(error, config.host, config.port);
        throw reason === null ? error : new CliError(reason);
      }
      runtime.app.log.info({ address, database: runtime.storage.dialect, workers: config.workers }, `${config.serviceName} listening`);
      closeOnSignal(runtime, true);
    });

  program
    .command('worker')
    .description('Run only the background workers (routing, order expiry, webhook delivery, daily snapshot, maintenance), without HTTP')
    .action(async () => {
      // A worker process is the same runtime with its workers on and no listening socket; API
      // processes then run with CAURI_WORKERS=none. They coordinate through the database.
      const config = { ...loadConfig(), workers: 'all' as const };
      const runtime = await createRuntime(config);
      runtime.app.log.info({ database: runtime.storage.dialect }, `${config.serviceName} workers running`);
      closeOnSignal(runtime, false);
    });
}

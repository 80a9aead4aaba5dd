import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import type { Runtime } from '../../app.js';
import { say } from '../i18n.js';
import { CliError } from '../output.js';

/**
 * Why the server could not bind, in one line naming the address, in the run's language; null for an
 * unexpected failure.
 */
export function listenFailure(error: unknown, host: string, port: number): string | null {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch ((error as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return say('serve.inUse', { address });
    case 'EACCES':
      return say('serve.denied', { address });
    case 'EADDRNOTAVAIL':
      return say('serve.notHere', { address });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say('serve.unresolved', { address });
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

/** What one process runs: the HTTP API, the background workers, or both (docs/production.md, "Process layout"). */
export type Role = 'api' | 'worker' | 'all';
export const ROLES: readonly Role[] = ['api', 'worker', 'all'];

/**
 * The role of a `cauri serve` process: `--role` when given; otherwise `api` when CAURI_WORKERS=none
 * (the older way to say it) and `all` by default. A role that is not one of the three is refused,
 * naming the valid ones.
 */
export function resolveRole(flag: string | undefined, workers: 'all' | 'none'): Role {
  if (flag === undefined) return workers === 'none' ? 'api' : 'all';
  const role = flag.trim().toLowerCase();
  if (!(ROLES as readonly string[]).includes(role))
    throw new CliError({ key: 'serve.role', params: { roles: ROLES.join(', '), value: flag } });
  return role as Role;
}

async function runRole(role: Role): Promise<void> {
  // Every role is the same runtime: `api` without the workers, `worker` without a listening socket.
  // Processes coordinate through the database (leases) and Redis (rate limits).
  const config = { ...loadConfig(), workers: role === 'api' ? ('none' as const) : ('all' as const) };
  const { createRuntime } = await import('../../app.js');
  const runtime = await createRuntime(config);
  if (config.mode === 'production' && config.publicUrlDefaulted && role !== 'worker') {
    runtime.app.log.warn(
      { public_url: config.publicUrl },
      'CAURI_PUBLIC_URL is not set: documents and access tokens name http://HOST:PORT; set it to the address clients use',
    );
  }
  if (role === 'worker') {
    runtime.app.log.info({ database: runtime.storage.dialect, role }, `${config.serviceName} workers running`);
    closeOnSignal(runtime, false);
    return;
  }
  let address: string;
  try {
    address = await runtime.app.listen({ host: config.host, port: config.port });
  } catch (error) {
    // The workers already started and the database is open: both are closed before exiting.
    await runtime.close();
    const reason = listenFailure(error, config.host, config.port);
    throw reason === null ? error : new CliError(reason);
  }
  runtime.app.log.info({ address, database: runtime.storage.dialect, role, workers: config.workers }, `${config.serviceName} listening`);
  closeOnSignal(runtime, true);
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the service: --role api (the HTTP API), worker (the background workers, no HTTP) or all (both; the default)')
    .option('--role <role>', `what this process runs: ${ROLES.join(', ')} (default all, or api when CAURI_WORKERS=none)`)
    .action(async (options: { role?: string }) => {
      // The role is checked before anything is opened, so a typo fails at once and touches nothing.
      const role = resolveRole(options.role, loadConfig().workers);
      await runRole(role);
    });

  program
    .command('worker')
    .description('The same as `cauri serve --role worker`: only the background workers, without HTTP')
    .action(async () => {
      await runRole('worker');
    });
}

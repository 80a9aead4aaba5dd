import { loadConfig, type Config } from '../config/config.js';
import { resolveMasterKey } from '../config/master-key.js';
import type { Services } from '../services.js';
import { systemClock } from '../lib/clock.js';
import type { Storage } from '../storage/database.js';

/**
 * The deployment's database, migrated and seeded as the service does it. The service's modules are
 * loaded here, on first use, not when the command line starts: `cauri --help`, `--version` and the
 * commands that only call the API never load them.
 */
export async function openDatabase(config: Config): Promise<Storage> {
  const app = await import('../services.js');
  return app.openDatabase(config);
}

/**
 * Opens the deployment the configuration names (same database, same master key as the service) for
 * one command, and closes it afterwards.
 */
export async function withDeployment<T>(run: (ctx: { config: Config; storage: Storage; services: Services }) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const masterKey = resolveMasterKey(config);
  const storage = await openDatabase(config);
  try {
    const [{ createServices }, { MemoryRateLimitStore }, { default: pino }] = await Promise.all([
      import('../services.js'),
      import('../http/rate-limit.js'),
      import('pino'),
    ]);
    const services = createServices(config, storage, masterKey, systemClock, new MemoryRateLimitStore(), pino({ level: 'warn' }));
    return await run({ config, storage, services });
  } finally {
    await storage.close();
  }
}

import { loadConfig, type Config } from '../config/config.js';
import { resolveMasterKey } from '../config/master-key.js';
import { createServices, openDatabase, type Services } from '../app.js';
import { MemoryRateLimitStore } from '../http/rate-limit.js';
import { systemClock } from '../lib/clock.js';
import type { Storage } from '../storage/database.js';
import pino from 'pino';

/**
 * Opens the deployment the configuration names (same database, same master key as the service) for
 * one command, and closes it afterwards.
 */
export async function withDeployment<T>(run: (ctx: { config: Config; storage: Storage; services: Services }) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const masterKey = resolveMasterKey(config);
  const storage = await openDatabase(config);
  try {
    const services = createServices(config, storage, masterKey, systemClock, new MemoryRateLimitStore(), pino({ level: 'warn' }));
    return await run({ config, storage, services });
  } finally {
    await storage.close();
  }
}

import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeKey, ensureDataDir, type Config } from './config.js';

/**
 * The master key protects every secret at rest (signing keys, webhook secrets) and authenticates page
 * cursors. Production takes it from CAURI_MASTER_KEY; a sandbox without one generates it once into
 * `<data dir>/master.key`, readable by the owner only, so that restarts keep their keys.
 */
export function resolveMasterKey(config: Config): Buffer {
  if (config.masterKey !== null) return config.masterKey;
  if (config.mode === 'production') throw new Error('CAURI_MASTER_KEY: is required in production');
  const path = join(config.dataDir, 'master.key');
  if (existsSync(path)) return decodeKey(readFileSync(path, 'utf8').trim());
  ensureDataDir(config.dataDir);
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return key;
}

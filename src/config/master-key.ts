import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeKey, ensureDataDir, type Config } from './config.js';

/**
 * The master key protects every secret at rest (signing keys, webhook secrets) and authenticates page
 * cursors. Production takes it from CAURI_MASTER_KEY; a sandbox without one generates it once into
 * `<data dir>/master.key`, readable by the owner only, so that restarts keep their keys.
 *
 * The file appears whole or not at all: the key is written and flushed to a file of its own, which is
 * then linked under its name (a link never replaces a key another process wrote first: that process's
 * key is read instead), and the folder is flushed before the key is used. An empty `master.key`, which
 * earlier versions could leave when they stopped between creating the file and writing it, held no
 * key anything was sealed with, and is replaced.
 */
export function resolveMasterKey(config: Config): Buffer {
  if (config.masterKey !== null) return config.masterKey;
  if (config.mode === 'production') throw new Error('CAURI_MASTER_KEY: is required in production');
  const path = join(config.dataDir, 'master.key');
  const existing = readKeyFile(path);
  if (existing !== null) return existing;
  ensureDataDir(config.dataDir);
  const key = randomBytes(32);
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${key.toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const written = readKeyFile(path);
    if (written === null) throw error;
    return written;
  } finally {
    unlinkSync(temp);
  }
  syncFolder(config.dataDir);
  return key;
}

/** The key the file holds; null when there is none (no file, or an empty one, which is removed). */
function readKeyFile(path: string): Buffer | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    // No file, or a data folder that is not one (ensureDataDir then says so, naming the variable).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
  if (text !== '') return decodeKey(text);
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return null;
}

/** Flushes a folder's entries, so that a file linked into it survives a power loss. */
function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { generateEndpointSecret } from '../../webhooks/core/signature.js';
import { CliError } from '../output.js';

/** What `cauri login` stores, and the `listen` signing secret. */
export interface StoredCredentials {
  api_url?: string;
  client_id?: string;
  client_secret?: string;
  /** The secret `cauri listen` signs forwarded events with; made once, so a receiver is configured once. */
  listen_secret?: string;
}

export interface Credentials {
  apiUrl: string;
  clientId: string;
  clientSecret: string;
}

type Env = Record<string, string | undefined>;

/** `CAURI_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cauri`, else `~/.config/cauri`. */
export function configDir(env: Env = process.env): string {
  if (env.CAURI_CONFIG_DIR !== undefined && env.CAURI_CONFIG_DIR !== '') return env.CAURI_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'cauri');
}

export function credentialsPath(env: Env = process.env): string {
  return join(configDir(env), 'credentials.json');
}

export function readStored(env: Env = process.env): StoredCredentials {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError({ key: 'file.unreadable', params: { path, reason: (error as Error).message } });
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as StoredCredentials;
  } catch (error) {
    throw new CliError({ key: 'credentials.invalid', params: { path, reason: (error as Error).message } });
  }
}

/**
 * Writes the file readable by its owner only (0600, in a 0700 folder): it holds a client secret.
 * The content goes to a temporary file created with that mode and is renamed over the old one, so
 * the secret is never readable by others, not even for a moment, and a crash leaves the old file.
 */
export function writeStored(stored: StoredCredentials, env: Env = process.env): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = credentialsPath(env);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}

/** Each value from the environment when set there, else from the file; all three are required. */
export function resolveCredentials(env: Env = process.env): Credentials {
  const stored = readStored(env);
  const pick = (name: string, value: string | undefined) => (env[name] !== undefined && env[name] !== '' ? env[name] : value);
  const apiUrl = pick('CAURI_API_URL', stored.api_url);
  const clientId = pick('CAURI_CLIENT_ID', stored.client_id);
  const clientSecret = pick('CAURI_CLIENT_SECRET', stored.client_secret);
  const missing = [
    apiUrl === undefined ? 'CAURI_API_URL' : null,
    clientId === undefined ? 'CAURI_CLIENT_ID' : null,
    clientSecret === undefined ? 'CAURI_CLIENT_SECRET' : null,
  ].filter((m) => m !== null);
  if (missing.length > 0 || apiUrl === undefined || clientId === undefined || clientSecret === undefined) {
    throw new CliError({ key: 'credentials.none', params: { missing: missing.join(', ') } });
  }
  return { apiUrl: normaliseApiUrl(apiUrl), clientId, clientSecret };
}

export function normaliseApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError({ key: 'credentials.url', params: { value } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError({ key: 'credentials.protocol', params: { value } });
  return url.toString().replace(/\/+$/, '');
}

/** Where `cauri listen` stopped, per API URL and client: `listen-state.json` beside the credentials. */
export function listenStatePath(env: Env = process.env): string {
  return join(configDir(env), 'listen-state.json');
}

type ListenState = Record<string, { last_event_id: string; updated_at: string }>;

function listenStateKey(apiUrl: string, clientId: string): string {
  return `${apiUrl} ${clientId}`;
}

function readListenState(env: Env): ListenState {
  try {
    const value = JSON.parse(readFileSync(listenStatePath(env), 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ListenState) : {};
  } catch {
    // Missing or unreadable: listen starts from now, as on a first run.
    return {};
  }
}

/** The last event `cauri listen` received for this client from this service, on this machine; null: none yet. */
export function readListenPosition(apiUrl: string, clientId: string, env: Env = process.env): string | null {
  const entry = readListenState(env)[listenStateKey(apiUrl, clientId)];
  return typeof entry?.last_event_id === 'string' && /^evt_[0-9a-z]{26}$/.test(entry.last_event_id) ? entry.last_event_id : null;
}

/** Records the last event received, atomically (a temporary file renamed over the old one). */
export function writeListenPosition(apiUrl: string, clientId: string, eventId: string, env: Env = process.env): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const state = readListenState(env);
  state[listenStateKey(apiUrl, clientId)] = { last_event_id: eventId, updated_at: new Date().toISOString() };
  const path = listenStatePath(env);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** The stored `listen` secret, made and saved on first use. */
export function listenSecret(env: Env = process.env): string {
  const stored = readStored(env);
  if (stored.listen_secret?.startsWith('whsec_')) return stored.listen_secret;
  const secret = generateEndpointSecret();
  writeStored({ ...stored, listen_secret: secret }, env);
  return secret;
}

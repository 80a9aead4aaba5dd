import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { storeUrlProblem } from './store-urls.js';

export type Mode = 'sandbox' | 'production';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type WorkerSet = 'all' | 'none';

export interface Config {
  readonly mode: Mode;
  /** `livemode` of events and tokens: true only in production. */
  readonly livemode: boolean;
  readonly serviceName: string;
  readonly host: string;
  readonly port: number;
  readonly publicUrl: string;
  /** CAURI_PUBLIC_URL was not set: `publicUrl` is `http://HOST:PORT` (production logs a warning). */
  readonly publicUrlDefaulted: boolean;
  readonly dataDir: string;
  /** A `postgres://` URL selects PostgreSQL; otherwise SQLite at `<dataDir>/cauri.sqlite`. */
  readonly databaseUrl: string | null;
  readonly databasePoolSize: number;
  /** PostgreSQL: run statements as named prepared statements (off behind a pooler that cannot keep them). */
  readonly pgPreparedStatements: boolean;
  /** `FULL` fsyncs every commit (no acknowledged write is lost on power failure). */
  readonly sqliteSynchronous: 'FULL' | 'NORMAL';
  readonly redisUrl: string | null;
  /** 32 bytes, or null in sandbox when the key is generated into the data folder. */
  readonly masterKey: Buffer | null;
  readonly rateLimitPerMinute: number;
  /** Failed client authentications per address per minute; past it the token endpoint refuses the address. */
  readonly authFailuresPerAddress: number;
  /** Failed client authentications naming one client id per minute; past it further failures are answered slowly. */
  readonly authFailuresPerClient: number;
  /** Longest wait for Redis on a request; past it (or at once when disconnected) rate limits count in memory. */
  readonly redisTimeoutMs: number;
  readonly logLevel: LogLevel;
  readonly contact: string;
  readonly attestationValidityDays: number;
  /** Background workers run in this process (`all`) or in separate `cauri worker` processes (`none`). */
  readonly workers: WorkerSet;
  /**
   * How long a process holds the work it claimed (orders being routed or expired, a partner's report
   * log) without renewing it; after it dies, another process takes over within this time. FIX
   * sessions are held for half of it.
   */
  readonly leaseSeconds: number;
  /** Seed synthetic partners and instruments on first start (sandbox default). */
  readonly seedSandboxData: boolean;
  /**
   * When the simulated partners execute orders on real time: in the phases of the instrument's
   * exchange (`exchange`, as a real SGI would), or at any hour (`always`, for demonstrations).
   */
  readonly sandboxMarketHours: 'exchange' | 'always';
  /** How old each process's copy of partners, instruments and reference rates may grow before it is read again. */
  readonly referenceRefreshSeconds: number;
  /**
   * Where the client address comes from: the connection (false), X-Forwarded-For's first entry (true:
   * every hop trusted), or its last entry not added by one of these comma-separated proxy addresses or
   * CIDR ranges, which a client cannot forge.
   */
  readonly trustProxy: boolean | string;
  /** Where daily audit roots are anchored: the local sandbox anchor, or an EVM chain over JSON-RPC. */
  readonly anchor: AnchorConfig;
  /**
   * Webhook receivers at private, loopback or link-local addresses: allowed in sandbox (local
   * development) unless set to false; always refused in production.
   */
  readonly webhooksAllowPrivate: boolean;
  /**
   * FIX partners with `tls: false`: allowed in sandbox; in production only with
   * CAURI_FIX_ALLOW_PLAINTEXT=true (the link is a VPN or a leased line).
   */
  readonly fixPlaintextAllowed: boolean;
  /** Time-outs and the connection cap of the HTTP server, against slow, idle or too many clients. */
  readonly http: HttpLimits;
  /**
   * Origins (`https://app.example.com`) whose browser pages may call the authenticated API; `'*'`
   * for any origin; empty for none. The public documents are readable from any origin regardless.
   */
  readonly corsOrigins: readonly string[] | '*';
  /** On SIGTERM, how long the process keeps serving, not ready (/readyz 503), before it stops accepting connections. */
  readonly shutdownDelaySeconds: number;
  /** Then, how long requests in flight may take to finish before their connections are closed. */
  readonly shutdownTimeoutSeconds: number;
}

export interface HttpLimits {
  /** Time to receive a request's headers, from the connection or from the first byte of the request. */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body; at least headersTimeoutMs. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between two requests. */
  readonly keepAliveTimeoutMs: number;
  /** Connections open at once on the process; further ones are closed as they arrive. */
  readonly maxConnections: number;
}

export type AnchorConfig =
  | { readonly kind: 'sandbox' }
  | {
      readonly kind: 'evm';
      readonly rpcUrl: string;
      /** Secret: the account that pays for anchoring transactions. */
      readonly privateKey: string;
      readonly chainName: string;
      readonly chainId: number | null;
      readonly confirmations: number;
      readonly to: string | null;
    };

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads the configuration once. `.env` in the working directory supplies defaults; the real
 * environment wins over it. Every wrong value throws a ConfigError naming its variable.
 */
export function loadConfig(env: Env = process.env, options: { dotenvPath?: string | null } = {}): Config {
  const dotenvPath = options.dotenvPath === undefined ? resolve('.env') : options.dotenvPath;
  const fromFile = dotenvPath !== null && existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {};
  const merged: Env = { ...fromFile, ...env };
  return parseConfig(merged);
}

export function parseConfig(env: Env): Config {
  const get = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const mode = oneOf(env, 'CAURI_MODE', ['sandbox', 'production'] as const, 'sandbox');
  const host = hostName(get('HOST') ?? '127.0.0.1');
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(get('CAURI_DATA_DIR') ?? './data');

  const databaseUrl = get('DATABASE_URL') ?? null;
  const redisUrl = get('REDIS_URL') ?? null;
  const storeProblem = storeUrlProblem(databaseUrl, redisUrl);
  if (storeProblem !== null) throw new ConfigError(...storeProblem);

  const rawMasterKey = get('CAURI_MASTER_KEY');
  const masterKey = rawMasterKey === undefined ? null : decodeKey(rawMasterKey);
  if (mode === 'production' && masterKey === null) {
    throw new ConfigError('CAURI_MASTER_KEY', 'is required in production (32 bytes, as 64 hex characters or base64)');
  }

  // Default `http://HOST:PORT` in both modes; a production deployment behind a proxy sets it.
  const rawPublicUrl = get('CAURI_PUBLIC_URL');
  const publicUrl = absoluteUrl('CAURI_PUBLIC_URL', rawPublicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`);

  // Both rates are checked whatever the mode, so that a wrong value never waits for a change of mode.
  const rateLimitSandbox = integer(env, 'CAURI_RATE_LIMIT_SANDBOX', 1000, 1, 10_000_000);
  const rateLimitProduction = integer(env, 'CAURI_RATE_LIMIT_PRODUCTION', 10000, 1, 10_000_000);
  const webhooksAllowPrivate = boolean(env, 'CAURI_WEBHOOKS_ALLOW_PRIVATE', true);
  const fixAllowPlaintext = boolean(env, 'CAURI_FIX_ALLOW_PLAINTEXT', false);

  const config: Config = {
    mode,
    livemode: mode === 'production',
    serviceName: name(env, 'CAURI_SERVICE_NAME', 'cauri'),
    host,
    port,
    publicUrl,
    publicUrlDefaulted: rawPublicUrl === undefined,
    dataDir,
    databaseUrl,
    databasePoolSize: integer(env, 'CAURI_DB_POOL_SIZE', 10, 1, 1000),
    pgPreparedStatements: boolean(env, 'CAURI_PG_PREPARED_STATEMENTS', true),
    sqliteSynchronous: oneOf(env, 'CAURI_SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL'),
    redisUrl,
    masterKey,
    rateLimitPerMinute: mode === 'production' ? rateLimitProduction : rateLimitSandbox,
    authFailuresPerAddress: integer(env, 'CAURI_AUTH_FAILURES_PER_ADDRESS', 20, 1, 1_000_000),
    authFailuresPerClient: integer(env, 'CAURI_AUTH_FAILURES_PER_CLIENT', 10, 1, 1_000_000),
    redisTimeoutMs: integer(env, 'CAURI_REDIS_TIMEOUT_MS', 100, 1, 10_000),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    contact: get('CAURI_CONTACT') ?? 'security@cauri.example',
    attestationValidityDays: integer(env, 'CAURI_ATTESTATION_VALIDITY_DAYS', 365, 1, 3650),
    workers: oneOf(env, 'CAURI_WORKERS', ['all', 'none'] as const, 'all'),
    leaseSeconds: integer(env, 'CAURI_LEASE_SECONDS', 30, 2, 3600),
    seedSandboxData: boolean(env, 'CAURI_SEED', mode === 'sandbox'),
    sandboxMarketHours: oneOf(env, 'CAURI_SANDBOX_MARKET_HOURS', ['exchange', 'always'] as const, 'exchange'),
    referenceRefreshSeconds: integer(env, 'CAURI_REFERENCE_REFRESH_SECONDS', 10, 1, 3600),
    trustProxy: trustProxy(env),
    anchor: anchorConfig(env, mode),
    webhooksAllowPrivate: mode === 'sandbox' && webhooksAllowPrivate,
    fixPlaintextAllowed: mode === 'sandbox' || fixAllowPlaintext,
    http: httpLimits(env),
    corsOrigins: corsOrigins(env),
    shutdownDelaySeconds: integer(env, 'CAURI_SHUTDOWN_DELAY_SECONDS', 5, 0, 3600),
    shutdownTimeoutSeconds: integer(env, 'CAURI_SHUTDOWN_TIMEOUT_SECONDS', 30, 1, 3600),
  };
  return Object.freeze(config);
}

function anchorConfig(env: Env, mode: Mode): AnchorConfig {
  const kind = oneOf(env, 'CAURI_ANCHOR', ['sandbox', 'evm'] as const, 'sandbox');
  if (kind === 'sandbox') return { kind };
  const required = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new ConfigError(name, 'is required when CAURI_ANCHOR=evm');
    return value;
  };
  const rpcUrl = absoluteUrl('CAURI_EVM_RPC_URL', required('CAURI_EVM_RPC_URL'));
  const privateKey = required('CAURI_EVM_PRIVATE_KEY');
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(privateKey)) throw new ConfigError('CAURI_EVM_PRIVATE_KEY', 'must be 32 bytes as 64 hex characters');
  const chainName = required('CAURI_EVM_CHAIN_NAME');
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(chainName))
    throw new ConfigError('CAURI_EVM_CHAIN_NAME', 'must be a lowercase name such as ethereum-sepolia');
  const chainIdText = env.CAURI_EVM_CHAIN_ID;
  if (mode === 'production' && (chainIdText === undefined || chainIdText === ''))
    throw new ConfigError('CAURI_EVM_CHAIN_ID', 'is required in production with CAURI_ANCHOR=evm');
  const to = env.CAURI_EVM_TO === undefined || env.CAURI_EVM_TO === '' ? null : env.CAURI_EVM_TO;
  if (to !== null && !/^0x[0-9a-fA-F]{40}$/.test(to)) throw new ConfigError('CAURI_EVM_TO', 'must be a 0x-prefixed 20-byte address');
  return {
    kind,
    rpcUrl,
    privateKey: privateKey.startsWith('0x') ? privateKey : `0x${privateKey}`,
    chainName,
    chainId: chainIdText === undefined || chainIdText === '' ? null : integer(env, 'CAURI_EVM_CHAIN_ID', 1, 1, Number.MAX_SAFE_INTEGER),
    confirmations: integer(env, 'CAURI_EVM_CONFIRMATIONS', 12, 1, 1000),
    to,
  };
}

function httpLimits(env: Env): HttpLimits {
  const limits: HttpLimits = {
    headersTimeoutMs: integer(env, 'CAURI_HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'CAURI_HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'CAURI_HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxConnections: integer(env, 'CAURI_HTTP_MAX_CONNECTIONS', 4096, 1, 1_000_000),
  };
  // Node refuses a headers time-out longer than the whole request's.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError('CAURI_HTTP_HEADERS_TIMEOUT_MS', `must not exceed CAURI_HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`);
  }
  return Object.freeze(limits);
}

/**
 * `CAURI_CORS_ORIGINS`: `*`, or origins separated by commas, each a scheme, a host and an optional
 * port (`https://app.example.com`, `http://localhost:3000`), as a browser sends them in `Origin`: no
 * path, query, fragment or credentials, so that a typo cannot silently allow nothing.
 */
function corsOrigins(env: Env): readonly string[] | '*' {
  const value = env.CAURI_CORS_ORIGINS?.trim();
  if (value === undefined || value === '') return Object.freeze([]);
  if (value === '*') return '*';
  const origins = value.split(',').map((entry) => entry.trim());
  for (const entry of origins) {
    const fail = (why: string) =>
      new ConfigError('CAURI_CORS_ORIGINS', `must be * or origins such as https://app.example.com separated by commas; "${entry}" ${why}`);
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw fail('is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail('is not http or https');
    if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || !/^[a-z]+:\/\/[^/]+\/?$/i.test(entry))
      throw fail('has more than a scheme, a host and a port');
  }
  // The form a browser sends: lower-case scheme and host, no default port, no trailing slash.
  return Object.freeze([...new Set(origins.map((entry) => new URL(entry).origin))]);
}

function oneOf<T extends string>(env: Env, variable: string, allowed: readonly T[], fallback: T): T {
  const value = env[variable];
  if (value === undefined || value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(variable, `must be one of ${allowed.join(', ')} (got "${value}")`);
}

function integer(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const value = env[variable];
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(variable, `must be a whole number (got "${value}")`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(variable, `must be between ${min} and ${max} (got ${n})`);
  return n;
}

function boolean(env: Env, variable: string, fallback: boolean): boolean {
  const value = env[variable];
  if (value === undefined || value === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(variable, `must be true or false (got "${value}")`);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: Env): boolean | string {
  const value = env.CAURI_TRUST_PROXY;
  if (value === undefined || value === '' || /^(1|0|true|false|yes|no|on|off)$/.test(value))
    return boolean(env, 'CAURI_TRUST_PROXY', false);
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!PROXY_NAMES.includes(entry) && (family === 0 || !prefixOk || rest.length > 0)) {
      throw new ConfigError(
        'CAURI_TRUST_PROXY',
        `must be true, false, or proxy addresses or CIDR ranges separated by commas (got "${entry}")`,
      );
    }
  }
  return entries.join(',');
}

/**
 * `HOST`: an IPv4 or IPv6 address, or a host name, as the server binds it and as the default public
 * URL names it. Anything else (`999.1.1.1`, `http://x`, a space) is refused here, naming HOST, rather
 * than when the server binds or as a wrong CAURI_PUBLIC_URL.
 */
function hostName(value: string): string {
  if (isIP(value) !== 0) return value;
  const fail = () => new ConfigError('HOST', `must be an IP address or a host name, such as 127.0.0.1, 0.0.0.0 or ::1 (got "${value}")`);
  // Letters, digits, dots, hyphens and underscores (container names), which URL's parser takes as a host.
  if (value.length > 253 || !/^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_.])?$/.test(value) || value.includes('..')) throw fail();
  try {
    new URL(`http://${value}/`);
  } catch {
    throw fail();
  }
  return value;
}

function name(env: Env, variable: string, fallback: string): string {
  const value = env[variable];
  if (value === undefined || value === '') return fallback;
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(value)) throw new ConfigError(variable, 'must be a lowercase name of letters, digits and hyphens');
  return value;
}

function absoluteUrl(variable: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `must be an absolute URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(variable, 'must be an http or https URL');
  return url.href.replace(/\/+$/, '');
}

/**
 * The master key is 32 bytes, given as 64 hex characters or as base64/base64url (43 characters,
 * optionally padded with one `=`). Node's base64 decoder skips characters it does not know, so the
 * alphabet is checked first: a mistyped key is refused, never read as some other 32 bytes.
 */
export function decodeKey(value: string): Buffer {
  const problem = 'must be 32 bytes, as 64 hex characters or base64 (43 characters, and an optional =)';
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) throw new ConfigError('CAURI_MASTER_KEY', problem);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== 32) throw new ConfigError('CAURI_MASTER_KEY', problem);
  return bytes;
}

/**
 * The data folder (CAURI_DATA_DIR), created when missing: the SQLite database and, in a sandbox
 * without CAURI_MASTER_KEY, the generated master key live there. A path that is a file, or a folder
 * this process cannot write, stops start-up naming the variable, not with a stack trace.
 */
export function ensureDataDir(dataDir: string): void {
  let reason: string | null = null;
  try {
    mkdirSync(dataDir, { recursive: true });
    if (!statSync(dataDir).isDirectory()) reason = 'is not a folder';
    else accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    reason =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'is not a folder (a file stands at that path or above it)'
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'is not writable by this process'
          : `cannot be created (${String(code ?? error)})`;
  }
  if (reason !== null) throw new ConfigError('CAURI_DATA_DIR', `${reason}: ${dataDir}`);
}

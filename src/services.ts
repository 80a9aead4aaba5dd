import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { AccountService } from './accounts/account.service.js';
import { anchorFromConfig } from './audit/anchor-from-config.js';
import { AuditService } from './audit/audit.service.js';
import { ClientService } from './auth/client.service.js';
import { CredentialGuard } from './auth/credential-guard.js';
import { TokenService } from './auth/token.service.js';
import { ConfigError, ensureDataDir, type Config } from './config/config.js';
import { RateLimiter, type RateLimitStore } from './http/rate-limit.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { KeyRing } from './keys/key-ring.js';
import { KycService } from './kyc/attestation.service.js';
import { CrlService } from './kyc/crl.service.js';
import { systemClock, type Clock } from './lib/clock.js';
import { deriveKey } from './lib/crypto.js';
import { CalendarCache } from './markets/calendar-cache.js';
import { applyShippedCalendars } from './markets/calendar.service.js';
import { applyShippedFees } from './partners/fee-schedule.service.js';
import { EXCHANGE_INFO } from './markets/exchanges.js';
import { retryPartnerOrdersNow } from './orders/order.repository.js';
import { ContractNoteService } from './post-trade/contract-note.service.js';
import { OrderService } from './orders/order.service.js';
import { ReferenceData } from './partners/reference-data.js';
import { seedSandboxDirectory } from './partners/sandbox-seed.js';
import { HoldingsCheck } from './positions/holdings-check.js';
import { PositionService } from './positions/position.service.js';
import { StatementService } from './positions/statement.service.js';
import { ConnectorRegistry, type ConnectorFactory } from './routing/registry.js';
import { Router } from './routing/router.js';
import { FixCredentialSealer } from './routing/fix/credentials.js';
import { FixEngine } from './routing/fix/fix-engine.js';
import { JournaledSandboxConnector } from './routing/sandbox/journaled-connector.js';
import { calendarSessions } from './routing/sandbox/session.js';
import { TestClockService, clockTime } from './testclocks/test-clock.service.js';
import { frozenTimeOf } from './testclocks/test-clock.repository.js';
import { openStorage, type Storage } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { OrderExpiry } from './orders/use-cases/expire-orders.js';

/** What opening the database takes besides the configuration. */
export interface OpenOptions {
  clock?: Clock;
  /** PostgreSQL schema (tests give each run its own). */
  pgSchema?: string;
}

export interface Services {
  readonly clients: ClientService;
  readonly keys: KeyRing;
  readonly tokens: TokenService;
  readonly idempotency: IdempotencyService;
  readonly limiter: RateLimiter;
  /** Failed client authentications at the token endpoint, in buckets apart from the limiter's. */
  readonly credentials: CredentialGuard;
  readonly kyc: KycService;
  readonly crl: CrlService;
  readonly connectors: ConnectorRegistry;
  /** The FIX partners' connectors and, in processes with workers, their sessions. */
  readonly fix: FixEngine;
  /** Partners, instruments and reference rates as this process holds them; invalidate() after an import. */
  readonly reference: ReferenceData;
  readonly orders: OrderService;
  /** Investors' account numbers at the SGIs, registered by the clients. */
  readonly accounts: AccountService;
  /** Investors' positions, kept up to date by the router as fills are applied. */
  readonly positions: PositionService;
  /** Statements of holdings declared from the SGIs, and their breaks. */
  readonly statements: StatementService;
  /** The holdings check of sells, for partners that ask for it. */
  readonly holdings: HoldingsCheck;
  /** Trade confirmations of orders with fills (JSON and PDF). */
  readonly contractNotes: ContractNoteService;
  readonly router: Router;
  /** The expiry use case: day and gtd orders cancelled at their close. */
  readonly expiry: OrderExpiry;
  readonly audit: AuditService;
  /** The exchanges' trading calendars, held in memory (reload() after an import). */
  readonly calendars: CalendarCache;
  /** Sandbox test clocks; undefined in production. */
  readonly testClocks: TestClockService | undefined;
}

/**
 * The domain services of one deployment; shared by the HTTP app, the workers and the command line.
 * `runFixSessions`: this process keeps the FIX partners' sessions up (processes with workers); the
 * others read the partners' report logs and leave the hand-overs to it.
 */
export function createServices(
  config: Config,
  storage: Storage,
  masterKey: Buffer,
  clock: Clock,
  rateLimitStore: RateLimitStore,
  log: FastifyBaseLogger,
  options: { runFixSessions?: boolean } = {},
): Services {
  const { db, dialect } = storage;
  const keys = new KeyRing(db, dialect, deriveKey(masterKey, 'signing-keys'), clock);
  // The exchanges' calendars, in memory: orders read their expiry and settlement dates from them.
  const calendars = new CalendarCache(db, clock, log);
  // This process, as the holder of leases (orders being routed, report logs, FIX sessions).
  const owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const fix = new FixEngine(
    db,
    storage.transact,
    clock,
    new FixCredentialSealer(deriveKey(masterKey, 'fix-credentials')),
    {
      runSessions: options.runFixSessions === true,
      plaintextAllowed: config.fixPlaintextAllowed,
      owner,
      leaseMs: config.leaseSeconds * 500,
      connectTimeoutMs: 10_000,
      answerTimeoutMs: 10_000,
      random: Math.random,
      // Orders that waited for the partner's session are handed over as soon as it is up, not at the end of their backoff.
      onLoggedOn: async (partnerId) => {
        await retryPartnerOrdersNow(db, partnerId, clock.now().getTime());
      },
      // The gateway's answers and fills reach their orders in the transaction that records them.
      applyToOrders: (trx, reports) => router.applyToOrders(trx, reports),
    },
    log,
  );
  // SGIs' gateways are reached over FIX in both modes; sandbox deployments also reach simulated partners.
  // The simulated exchange trades in its calendar's phases (unless configured to trade at any hour);
  // the orders on a test clock reach a sandbox instance of their own, on the clock's time. A FIX
  // partner's gateway keeps its own time, so the orders on a test clock share its one connector.
  const sessions = calendarSessions(() => calendars.current());
  const factories: Record<string, ConnectorFactory> = { fix: (partnerId) => fix.connector(partnerId) };
  if (config.mode === 'sandbox') {
    factories.sandbox = (partnerId, testClock) =>
      testClock === undefined
        ? new JournaledSandboxConnector(
            partnerId,
            db,
            storage.transact,
            clock,
            config.sandboxMarketHours === 'exchange' ? { session: sessions } : {},
          )
        : new JournaledSandboxConnector(partnerId, db, storage.transact, clock, {
            journal: `${partnerId}@${testClock}`,
            session: sessions,
            now: () => clockTime(db, testClock),
          });
  }
  const connectors = new ConnectorRegistry(factories);
  const reference = new ReferenceData(db, clock, {
    refreshMs: config.referenceRefreshSeconds * 1000,
    onRefreshError: (error) => log.warn({ err: error }, 'reference data refresh failed; the previous copy keeps serving'),
  });
  const settlementDays = (exchange: keyof typeof EXCHANGE_INFO) => EXCHANGE_INFO[exchange].settlement_days;
  const positions = new PositionService(reference, calendars, clock, { dialect, settlementDays });
  const router = new Router(
    db,
    storage.transact,
    connectors,
    clock,
    {
      livemode: config.livemode,
      dialect,
      handOverTimeoutMs: 2000,
      leaseMs: config.leaseSeconds * 1000,
      owner,
      random: Math.random,
      ...(config.mode === 'sandbox' ? { testClockTime: frozenTimeOf } : {}),
    },
    log,
    positions,
  );
  const expiry = new OrderExpiry(db, storage.transact, router, clock, { dialect, leaseMs: config.leaseSeconds * 1000 }, log);
  const testClocks =
    config.mode === 'sandbox' ? new TestClockService(db, storage.transact, connectors, router, expiry, clock, log) : undefined;
  const orders = new OrderService(
    connectors,
    reference,
    clock,
    calendars,
    {
      livemode: config.livemode,
      dialect,
      firstHandOverGraceMs: 5000,
      settlementDays: (exchange) => EXCHANGE_INFO[exchange].settlement_days,
    },
    testClocks === undefined ? undefined : (trx, clientId, id) => testClocks.frozenTimeFor(trx, clientId, id),
  );
  return {
    expiry,
    clients: new ClientService(db, deriveKey(masterKey, 'client-secrets'), config.mode, clock, () => storage.changeMarker()),
    keys,
    tokens: new TokenService(keys, { issuer: config.publicUrl, audience: `${config.publicUrl}/v1`, livemode: config.livemode }, clock),
    idempotency: new IdempotencyService(db, storage.transact, clock, storage.dialect, deriveKey(masterKey, 'idempotency-responses')),
    limiter: new RateLimiter(rateLimitStore, config.rateLimitPerMinute, clock),
    credentials: new CredentialGuard(
      rateLimitStore,
      { failuresPerAddress: config.authFailuresPerAddress, failuresPerClient: config.authFailuresPerClient },
      clock,
    ),
    kyc: new KycService(keys, clock, {
      issuer: config.serviceName,
      validityDays: config.attestationValidityDays,
      livemode: config.livemode,
      dialect,
    }),
    crl: new CrlService(db, keys, clock, config.serviceName),
    connectors,
    fix,
    reference,
    orders,
    positions,
    statements: new StatementService(positions, reference, clock, { dialect, livemode: config.livemode }),
    holdings: new HoldingsCheck(reference, dialect),
    contractNotes: new ContractNoteService(orders, clock, config.serviceName),
    testClocks,
    accounts: new AccountService(clock),
    router,
    audit: new AuditService(
      db,
      storage.transact,
      keys,
      anchorFromConfig(config.anchor, clock),
      clock,
      { livemode: config.livemode, dialect },
      log,
    ),
    calendars,
  };
}

/**
 * Opens the database, applies migrations, the shipped exchange calendars and fee schedules (in every
 * mode) and, in sandbox, seeds the synthetic directory.
 */
export async function openDatabase(config: Config, options: OpenOptions = {}): Promise<Storage> {
  if (config.databaseUrl === null) ensureDataDir(config.dataDir);
  const storage = await openStorage({
    databaseUrl: config.databaseUrl,
    sqlitePath: join(config.dataDir, 'cauri.sqlite'),
    poolSize: config.databasePoolSize,
    pgPreparedStatements: config.pgPreparedStatements,
    sqliteSynchronous: config.sqliteSynchronous,
    ...(options.pgSchema === undefined ? {} : { pgSchema: options.pgSchema }),
  }).catch((error: unknown) => {
    throw config.databaseUrl === null ? error : (unreachableDatabase(config.databaseUrl, error) ?? error);
  });
  try {
    await migrateToLatest(storage.db, storage.schema);
    const now = (options.clock ?? systemClock).now();
    await applyShippedCalendars(storage.db, storage.dialect, now);
    await applyShippedFees(storage.db, storage.dialect, now);
    if (config.seedSandboxData) await seedSandboxDirectory(storage.db, storage.dialect, now);
  } catch (error) {
    await storage.close();
    throw config.databaseUrl === null ? error : (unreachableDatabase(config.databaseUrl, error) ?? error);
  }
  return storage;
}

/** PostgreSQL's and the socket's answers that mean the database of DATABASE_URL cannot be used at all. */
const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  '28P01', // invalid_password
  '28000', // invalid_authorization_specification
  '3D000', // invalid_catalog_name: no such database
]);

/**
 * At start, a database that cannot be reached or entered is a configuration problem: one line naming
 * DATABASE_URL (its host, port and database, never its password) rather than a driver's stack trace.
 */
export function unreachableDatabase(databaseUrl: string, error: unknown): ConfigError | null {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !CONNECTION_FAILURES.has(code)) return null;
  let where = 'the database';
  try {
    const url = new URL(databaseUrl);
    where = `${url.hostname}${url.port === '' ? '' : `:${url.port}`}${url.pathname}`;
  } catch {
    // The URL was checked at start; keep the generic words.
  }
  return new ConfigError('DATABASE_URL', `cannot connect to ${where}: ${error instanceof Error ? error.message : String(error)} (${code})`);
}

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { accountRoutes } from './accounts/account.routes.js';
import { AccountService } from './accounts/account.service.js';
import { anchorFromConfig } from './audit/anchor-from-config.js';
import { auditRoutes } from './audit/audit.routes.js';
import { AuditService } from './audit/audit.service.js';
import { SnapshotWorker } from './workers/snapshot-worker.js';
import { installAuthentication } from './auth/authenticate.js';
import { ClientService } from './auth/client.service.js';
import { CredentialGuard, registerCredentialMetrics } from './auth/credential-guard.js';
import { SCOPE_DESCRIPTIONS } from './auth/scopes.js';
import { selfServiceRoutes } from './auth/self-service.routes.js';
import { tokenRoutes } from './auth/token.routes.js';
import { TokenService } from './auth/token.service.js';
import type { Config } from './config/config.js';
import { resolveMasterKey } from './config/master-key.js';
import { countPendingDispatch } from './events/event.repository.js';
import { eventStreamRoutes } from './webhooks/stream.routes.js';
import { eventResendRoutes } from './webhooks/resend.routes.js';
import { createHttpApp, type App } from './http/app.js';
import { CursorCodec } from './http/cursor.js';
import { dashboardRoutes } from './http/dashboard.routes.js';
import { Drain } from './http/drain.js';
import { guardIdempotentRoutes } from './idempotency/idempotent-reply.js';
import { Metrics } from './http/metrics.js';
import { opsRoutes } from './http/ops.routes.js';
import { MemoryRateLimitStore, RateLimiter, type RateLimitStore } from './http/rate-limit.js';
import { openRedisRateLimitStore } from './http/rate-limit-redis.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { KeyRing } from './keys/key-ring.js';
import { KycService } from './kyc/attestation.service.js';
import { CrlService } from './kyc/crl.service.js';
import { kycRoutes } from './kyc/kyc.routes.js';
import { systemClock, type Clock } from './lib/clock.js';
import { deriveKey } from './lib/crypto.js';
import { CalendarCache } from './markets/calendar-cache.js';
import { applyShippedCalendars } from './markets/calendar.service.js';
import { applyShippedFees } from './post-trade/fee-schedule.service.js';
import { EXCHANGE_INFO } from './markets/exchanges.js';
import { marketRoutes } from './markets/market.routes.js';
import { retryPartnerOrdersNow } from './orders/order.repository.js';
import { orderRoutes } from './orders/order.routes.js';
import { contractNoteRoutes } from './post-trade/contract-note.routes.js';
import { ContractNoteService } from './post-trade/contract-note.service.js';
import { OrderService } from './orders/order.service.js';
import { listPartners } from './partners/partner.repository.js';
import { directoryRoutes } from './partners/partner.routes.js';
import { ReferenceData } from './partners/reference-data.js';
import { seedSandboxDirectory } from './partners/sandbox-seed.js';
import { HoldingsCheck } from './positions/holdings-check.js';
import { positionRoutes } from './positions/position.routes.js';
import { PositionService } from './positions/position.service.js';
import { StatementService } from './positions/statement.service.js';
import { ConnectorRegistry, type ConnectorFactory } from './routing/registry.js';
import { Router } from './routing/router.js';
import { FixCredentialSealer } from './routing/fix/credentials.js';
import { fixRoutes } from './routing/fix/fix.routes.js';
import { FixEngine } from './routing/fix/fix-engine.js';
import { JournaledSandboxConnector } from './routing/sandbox/journaled-connector.js';
import { calendarSessions } from './routing/sandbox/session.js';
import { testClockRoutes } from './testclocks/test-clock.routes.js';
import { TestClockService, clockTime } from './testclocks/test-clock.service.js';
import { openStorage, type Storage } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { createWebhooks } from './webhooks/index.js';
import { registerDeliveryMetrics } from './workers/delivery-metrics.js';
import { createDeliveryWorker } from './workers/delivery-worker.js';
import { ExpiryWorker } from './workers/expiry-worker.js';
import { OrderExpiry } from './orders/use-cases/expire-orders.js';
import { MaintenanceWorker } from './workers/maintenance.js';
import { RoutingWorker } from './workers/routing-worker.js';

export interface RuntimeOptions {
  clock?: Clock;
  /** PostgreSQL schema (tests give each run its own). */
  pgSchema?: string;
  /** Where the logs go instead of standard output (tests read them). */
  logDestination?: DestinationStream;
  /**
   * Called with the HTTP app once every route is registered, before it is ready: a place for hooks
   * of an embedding program (the tests check every response against the OpenAPI document there).
   */
  extendApp?: (app: App) => void | Promise<void>;
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

export interface CloseOptions {
  /**
   * How long the HTTP server keeps serving, not ready, before it stops accepting connections
   * (CAURI_SHUTDOWN_DELAY_SECONDS on SIGTERM); default 0.
   */
  drainMs?: number;
}

export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly storage: Storage;
  readonly services: Services;
  readonly app: App;
  /**
   * Stops the process's work in order: readiness fails at once; after `drainMs` the listener closes
   * and the requests in flight finish (their connections are cut after CAURI_SHUTDOWN_TIMEOUT_SECONDS);
   * then the workers finish their passes, and the connections to partners, Redis and the database close.
   */
  close(options?: CloseOptions): Promise<void>;
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
    { livemode: config.livemode, dialect, handOverTimeoutMs: 2000, leaseMs: config.leaseSeconds * 1000, owner, random: Math.random },
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

async function createRateLimitStore(config: Config, log: FastifyBaseLogger): Promise<RateLimitStore> {
  return config.redisUrl === null ? new MemoryRateLimitStore() : openRedisRateLimitStore(config.redisUrl, config.redisTimeoutMs, log);
}

/**
 * Opens the database, applies migrations, the shipped exchange calendars and fee schedules (in every
 * mode) and, in sandbox, seeds the synthetic directory.
 */
export async function openDatabase(config: Config, options: RuntimeOptions = {}): Promise<Storage> {
  const storage = await openStorage({
    databaseUrl: config.databaseUrl,
    sqlitePath: join(config.dataDir, 'cauri.sqlite'),
    poolSize: config.databasePoolSize,
    pgPreparedStatements: config.pgPreparedStatements,
    sqliteSynchronous: config.sqliteSynchronous,
    ...(options.pgSchema === undefined ? {} : { pgSchema: options.pgSchema }),
  });
  try {
    await migrateToLatest(storage.db, storage.schema);
    const now = (options.clock ?? systemClock).now();
    await applyShippedCalendars(storage.db, storage.dialect, now);
    await applyShippedFees(storage.db, storage.dialect, now);
    if (config.seedSandboxData) await seedSandboxDirectory(storage.db, storage.dialect, now);
  } catch (error) {
    await storage.close();
    throw error;
  }
  return storage;
}

/**
 * The composition root: configuration in, a wired service out. Every dependency is built here and
 * passed down; no module below reads the environment or a global.
 */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const masterKey = resolveMasterKey(config);
  const storage = await openDatabase(config, options);
  const { db } = storage;

  const logOptions = {
    level: config.logLevel,
    base: { service: config.serviceName, mode: config.mode, pid: process.pid },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
  };
  const log: FastifyBaseLogger = options.logDestination === undefined ? pino(logOptions) : pino(logOptions, options.logDestination);
  const rateLimitStore = await createRateLimitStore(config, log);
  const services = createServices(config, storage, masterKey, clock, rateLimitStore, log, { runFixSessions: config.workers === 'all' });
  // A current key of each purpose exists before the first request (created on first start).
  await services.keys.current('token');
  await services.keys.current('attestation');
  await services.calendars.reload();
  // Partners, instruments and rates are read once now rather than by the first order.
  await services.reference.current();

  const cursors = new CursorCodec(deriveKey(masterKey, 'cursor'));
  const webhooks = createWebhooks({
    config,
    storage,
    clock,
    masterKey,
    idempotency: services.idempotency,
    cursors,
    log,
    options: { allowPrivateInSandbox: config.webhooksAllowPrivate },
  });
  const deliveryWorker = createDeliveryWorker(webhooks);
  const metrics = new Metrics({
    poolStats: () => storage.poolStats(),
    commitStats: () => storage.commitStats(),
    pendingEvents: () => countPendingDispatch(db),
    cachedDocuments: () => services.kyc.cachedDocuments,
    fixSessions: () => services.fix.sessions(),
    fixRefusedMessages: () => services.fix.refusedMessages(),
    rateLimitStore: () => rateLimitStore.health?.() ?? { degraded: false, outages: 0 },
  });

  // Each producer registers its own series.
  registerDeliveryMetrics(metrics.registry, () => deliveryWorker.stats);
  registerCredentialMetrics(metrics.registry, () => services.credentials.stats);
  services.fix.metrics.register(metrics.registry);
  const drain = new Drain();
  const app = await createHttpApp(config, metrics, log, drain, SCOPE_DESCRIPTIONS);
  installAuthentication(app, { db, changeMarker: () => storage.changeMarker(), tokens: services.tokens, limiter: services.limiter });
  const redisEffect = 'rate limits are counted by each process on its own until it answers';
  guardIdempotentRoutes(app);
  await app.register(opsRoutes, {
    db,
    metrics,
    degradable: config.redisUrl === null ? {} : { redis: { check: () => rateLimitStore.ping(), effect: redisEffect } },
    draining: () => drain.draining,
  });
  await app.register(tokenRoutes, {
    clients: services.clients,
    tokens: services.tokens,
    keys: services.keys,
    limiter: services.limiter,
    guard: services.credentials,
  });
  await app.register(selfServiceRoutes, { clients: services.clients, tokens: services.tokens, limiter: services.limiter });
  await app.register(directoryRoutes, { db, cursors });
  await app.register(marketRoutes, { calendars: services.calendars, clock });
  await app.register(kycRoutes, {
    db,
    kyc: services.kyc,
    crl: services.crl,
    keys: services.keys,
    idempotency: services.idempotency,
    serviceName: config.serviceName,
    publicUrl: config.publicUrl,
    contact: config.contact,
  });
  const useCases = {
    transact: storage.transact,
    idempotency: services.idempotency,
    orders: services.orders,
    router: services.router,
    holdings: services.holdings,
    livemode: config.livemode,
  };
  await app.register(orderRoutes, { db, orders: services.orders, useCases, cursors });
  await app.register(accountRoutes, { db, transact: storage.transact, accounts: services.accounts, cursors });
  await app.register(positionRoutes, {
    db,
    positions: services.positions,
    statements: services.statements,
    idempotency: services.idempotency,
    cursors,
  });
  await app.register(contractNoteRoutes, { db, notes: services.contractNotes });
  if (services.testClocks !== undefined)
    await app.register(testClockRoutes, { db, testClocks: services.testClocks, idempotency: services.idempotency });
  await app.register(auditRoutes, { db, audit: services.audit });
  await app.register(fixRoutes, { db, clock });
  await app.register(webhooks.routes);
  await app.register(eventStreamRoutes, { db, clock });
  await app.register(eventResendRoutes, {
    dialect: storage.dialect,
    clock,
    idempotency: services.idempotency,
    deliveries: webhooks.service.deliveries,
  });
  await app.register(dashboardRoutes, {});
  await options.extendApp?.(app);
  await app.ready();

  const maintenance = new MaintenanceWorker(db, services.keys, clock, log);
  const routing = new RoutingWorker(services.router, log);
  const expiry = new ExpiryWorker(services.expiry, log);
  const snapshots = new SnapshotWorker(services.audit, clock, log);
  // Every process, API or worker, sees another process's calendar import within the refresh period.
  services.calendars.start();
  if (config.workers === 'all') {
    // The FIX partners' sessions log on at start, before the first order needs them.
    for (const partner of await listPartners(db, { afterId: null, limit: 100_000, approvedOnly: false })) {
      if (partner.connector === 'fix') services.connectors.get('fix', partner.id);
    }
    maintenance.start();
    routing.start();
    expiry.start();
    snapshots.start();
    deliveryWorker.start();
  }

  return {
    config,
    clock,
    storage,
    services,
    app,
    async close(options: CloseOptions = {}) {
      // The HTTP requests first: they may still hand orders to partners' connectors.
      const { cut } = await drain.close(app, options.drainMs ?? 0, config.shutdownTimeoutSeconds * 1000);
      if (cut)
        log.warn(
          { timeout_s: config.shutdownTimeoutSeconds },
          'requests still in flight after CAURI_SHUTDOWN_TIMEOUT_SECONDS; their connections were closed',
        );
      services.calendars.stop();
      await maintenance.stop();
      await routing.stop();
      await expiry.stop();
      await snapshots.stop();
      await deliveryWorker.stop();
      await services.fix.close();
      await rateLimitStore.close();
      await storage.close();
    },
  };
}

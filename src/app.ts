import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { accountRoutes } from './accounts/account.routes.js';
import { auditRoutes } from './audit/audit.routes.js';
import { SnapshotWorker } from './workers/snapshot-worker.js';
import { installAuthentication } from './auth/authenticate.js';
import { registerCredentialMetrics } from './auth/credential-guard.js';
import { SCOPE_DESCRIPTIONS } from './auth/scopes.js';
import { selfServiceRoutes } from './auth/self-service.routes.js';
import { tokenRoutes } from './auth/token.routes.js';
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
import { MemoryRateLimitStore, type RateLimitStore } from './http/rate-limit.js';
import { kycRoutes } from './kyc/kyc.routes.js';
import { systemClock, type Clock } from './lib/clock.js';
import { deriveKey } from './lib/crypto.js';
import { marketRoutes } from './markets/market.routes.js';
import { orderRoutes } from './orders/order.routes.js';
import { contractNoteRoutes } from './post-trade/contract-note.routes.js';
import { listPartners } from './partners/partner.repository.js';
import { directoryRoutes } from './partners/partner.routes.js';
import { positionRoutes } from './positions/position.routes.js';
import { fixRoutes } from './routing/fix/fix.routes.js';
import { testClockRoutes } from './testclocks/test-clock.routes.js';
import type { Storage } from './storage/database.js';
import { createWebhooks } from './webhooks/index.js';
import { webhooksSection } from './webhooks/webhook.openapi.js';
import { registerDeliveryMetrics } from './workers/delivery-metrics.js';
import { createDeliveryWorker } from './workers/delivery-worker.js';
import { ExpiryWorker } from './workers/expiry-worker.js';
import { MaintenanceWorker } from './workers/maintenance.js';
import { RoutingWorker } from './workers/routing-worker.js';
import { createServices, openDatabase, type OpenOptions, type Services } from './services.js';
import { serializeRequest } from './http/log-redaction.js';

export { createServices, openDatabase, type OpenOptions, type Services };

export interface RuntimeOptions extends OpenOptions {
  /** Where the logs go instead of standard output (tests read them). */
  logDestination?: DestinationStream;
  /**
   * Called with the HTTP app once every route is registered, before it is ready: a place for hooks
   * of an embedding program (the tests check every response against the OpenAPI document there).
   */
  extendApp?: (app: App) => void | Promise<void>;
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

async function createRateLimitStore(config: Config, log: FastifyBaseLogger): Promise<RateLimitStore> {
  if (config.redisUrl === null) return new MemoryRateLimitStore();
  // Redis's client is loaded by the deployments that name a Redis.
  const { openRedisRateLimitStore } = await import('./http/rate-limit-redis.js');
  return openRedisRateLimitStore(config.redisUrl, config.redisTimeoutMs, log);
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
    serializers: { req: serializeRequest },
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
    wireStats: () => storage.wireStats(),
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
  const app = await createHttpApp(config, metrics, log, drain, SCOPE_DESCRIPTIONS, webhooksSection(config.serviceName));
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
  await app.register(selfServiceRoutes, { clients: services.clients, idempotency: services.idempotency });
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
    await app.register(testClockRoutes, { db, testClocks: services.testClocks, idempotency: services.idempotency, cursors });
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

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { anchorFromConfig } from './audit/anchor-from-config.js';
import { auditRoutes } from './audit/audit.routes.js';
import { AuditService } from './audit/audit.service.js';
import { SnapshotWorker } from './audit/snapshot-worker.js';
import { installAuthentication } from './auth/authenticate.js';
import { ClientService } from './auth/client.service.js';
import { selfServiceRoutes } from './auth/self-service.routes.js';
import { tokenRoutes } from './auth/token.routes.js';
import { TokenService } from './auth/token.service.js';
import type { Config } from './config/config.js';
import { resolveMasterKey } from './config/master-key.js';
import { countPendingDispatch } from './events/event.repository.js';
import { eventStreamRoutes } from './events/stream.routes.js';
import { createHttpApp, type App } from './http/app.js';
import { CursorCodec } from './http/cursor.js';
import { dashboardRoutes } from './http/dashboard.routes.js';
import { Metrics } from './http/metrics.js';
import { opsRoutes } from './http/ops.routes.js';
import { MemoryRateLimitStore, RateLimiter, RedisRateLimitStore, type RateLimitStore } from './http/rate-limit.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { KeyRing } from './keys/key-ring.js';
import { KycService } from './kyc/attestation.service.js';
import { CrlService } from './kyc/crl.service.js';
import { kycRoutes } from './kyc/kyc.routes.js';
import { systemClock, type Clock } from './lib/clock.js';
import { deriveKey } from './lib/crypto.js';
import { orderRoutes } from './orders/order.routes.js';
import { OrderService } from './orders/order.service.js';
import { listPartners } from './partners/partner.repository.js';
import { directoryRoutes } from './partners/partner.routes.js';
import { seedSandboxDirectory } from './partners/sandbox-seed.js';
import { ConnectorRegistry, type ConnectorFactory } from './routing/registry.js';
import { Router } from './routing/router.js';
import { FixCredentialSealer } from './routing/fix/credentials.js';
import { FixEngine } from './routing/fix/fix-engine.js';
import { JournaledSandboxConnector } from './routing/sandbox/journaled-connector.js';
import { openStorage, type Storage } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { createWebhooks } from './webhooks/index.js';
import { MaintenanceWorker } from './workers/maintenance.js';
import { RoutingWorker } from './workers/routing-worker.js';

export interface RuntimeOptions {
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
  readonly kyc: KycService;
  readonly crl: CrlService;
  readonly connectors: ConnectorRegistry;
  /** The FIX partners' connectors and, in processes with workers, their sessions. */
  readonly fix: FixEngine;
  readonly orders: OrderService;
  readonly router: Router;
  readonly audit: AuditService;
}

export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly storage: Storage;
  readonly services: Services;
  readonly app: App;
  close(): Promise<void>;
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
  // This process, as the holder of leases (orders being routed, report logs, FIX sessions).
  const owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const fix = new FixEngine(
    db,
    storage.transact,
    clock,
    new FixCredentialSealer(deriveKey(masterKey, 'fix-credentials')),
    { runSessions: options.runFixSessions === true, plaintextAllowed: config.fixPlaintextAllowed, owner, leaseMs: 30_000, connectTimeoutMs: 10_000, answerTimeoutMs: 10_000, random: Math.random },
    log,
  );
  // Sandbox deployments also reach simulated partners; SGIs' gateways are reached over FIX in both modes.
  const factories: Record<string, ConnectorFactory> = { fix: (partnerId) => fix.connector(partnerId) };
  if (config.mode === 'sandbox') factories.sandbox = (partnerId) => new JournaledSandboxConnector(partnerId, db, storage.transact, clock);
  const connectors = new ConnectorRegistry(factories);
  const router = new Router(db, storage.transact, connectors, clock, { livemode: config.livemode, dialect, handOverTimeoutMs: 2000, leaseMs: 30_000, owner, random: Math.random }, log);
  return {
    clients: new ClientService(db, deriveKey(masterKey, 'client-secrets'), config.mode, clock, () => storage.changeMarker()),
    keys,
    tokens: new TokenService(keys, { issuer: config.publicUrl, audience: `${config.publicUrl}/v1`, livemode: config.livemode }, clock),
    idempotency: new IdempotencyService(db, storage.transact, clock, storage.dialect),
    limiter: new RateLimiter(rateLimitStore, config.rateLimitPerMinute, clock, (error) => log.warn({ err: error }, 'rate-limit store unavailable; request let through uncounted')),
    kyc: new KycService(keys, clock, { issuer: config.serviceName, validityDays: config.attestationValidityDays, livemode: config.livemode, dialect }),
    crl: new CrlService(db, keys, clock, config.serviceName),
    connectors,
    fix,
    orders: new OrderService(connectors, clock, { livemode: config.livemode, dialect, firstHandOverGraceMs: 5000 }),
    router,
    audit: new AuditService(db, storage.transact, keys, anchorFromConfig(config.anchor, clock), clock, { livemode: config.livemode, dialect }, log),
  };
}

function createRateLimitStore(config: Config, log: FastifyBaseLogger): RateLimitStore {
  if (config.redisUrl === null) return new MemoryRateLimitStore();
  const redis = new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  // Without a listener ioredis prints connection errors itself, outside the JSON logs.
  redis.on('error', (error: unknown) => log.warn({ err: error }, 'redis connection error'));
  return new RedisRateLimitStore(redis);
}

/** Opens the database, applies migrations and, in sandbox, seeds the synthetic directory. */
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
    if (config.seedSandboxData) await seedSandboxDirectory(storage.db, (options.clock ?? systemClock).now());
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

  const log: FastifyBaseLogger = pino({
    level: config.logLevel,
    base: { service: config.serviceName, mode: config.mode, pid: process.pid },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
  });
  const rateLimitStore = createRateLimitStore(config, log);
  const services = createServices(config, storage, masterKey, clock, rateLimitStore, log, { runFixSessions: config.workers === 'all' });
  // A current key of each purpose exists before the first request (created on first start).
  await services.keys.current('token');
  await services.keys.current('attestation');

  const cursors = new CursorCodec(deriveKey(masterKey, 'cursor'));
  const webhooks = createWebhooks({ config, storage, clock, masterKey, idempotency: services.idempotency, cursors, log, options: { allowPrivateInSandbox: config.webhooksAllowPrivate } });
  const metrics = new Metrics({
    poolStats: () => storage.poolStats(),
    commitStats: () => storage.commitStats(),
    pendingEvents: () => countPendingDispatch(db),
    cachedDocuments: () => services.kyc.cachedDocuments,
    webhookWorker: () => webhooks.worker.stats,
    fixSessions: () => services.fix.sessions(),
  });

  const app = await createHttpApp(config, metrics, log);
  installAuthentication(app, { db, changeMarker: () => storage.changeMarker(), tokens: services.tokens, limiter: services.limiter });
  await app.register(opsRoutes, { db, metrics, checks: config.redisUrl === null ? {} : { redis: () => rateLimitStore.ping() } });
  await app.register(tokenRoutes, { clients: services.clients, tokens: services.tokens, keys: services.keys, limiter: services.limiter });
  await app.register(selfServiceRoutes, { clients: services.clients, tokens: services.tokens, limiter: services.limiter });
  await app.register(directoryRoutes, { db, cursors });
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
  await app.register(orderRoutes, { db, orders: services.orders, router: services.router, idempotency: services.idempotency, cursors });
  await app.register(auditRoutes, { db, audit: services.audit });
  await app.register(webhooks.routes);
  await app.register(eventStreamRoutes, { db, dialect: storage.dialect, clock, idempotency: services.idempotency, deliveries: webhooks.service.deliveries });
  await app.register(dashboardRoutes, {});
  await app.ready();

  const maintenance = new MaintenanceWorker(db, services.keys, clock, log);
  const routing = new RoutingWorker(services.router, log);
  const snapshots = new SnapshotWorker(services.audit, clock, log);
  if (config.workers === 'all') {
    // The FIX partners' sessions log on at start, before the first order needs them.
    for (const partner of await listPartners(db, { afterId: null, limit: 100_000, approvedOnly: false })) {
      if (partner.connector === 'fix') services.connectors.get('fix', partner.id);
    }
    maintenance.start();
    routing.start();
    snapshots.start();
    webhooks.worker.start();
  }

  return {
    config,
    clock,
    storage,
    services,
    app,
    async close() {
      await maintenance.stop();
      await routing.stop();
      await snapshots.stop();
      await webhooks.worker.stop();
      await services.fix.close();
      await app.close();
      await rateLimitStore.close();
      await storage.close();
    },
  };
}

import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { CursorCodec } from '../http/cursor.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { Clock } from '../lib/clock.js';
import { deriveKey } from '../lib/crypto.js';
import type { Storage } from '../storage/database.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { DeliveryService } from './delivery.service.js';
import { EndpointService, MAX_ENDPOINTS_PER_CLIENT } from './endpoint.service.js';
import { EndpointSecrets } from './secrets.js';
import { UndiciSender, type Resolver, type WebhookSender } from './sender.js';
import { eventRoutes, webhookRoutes } from './webhook.routes.js';

export { EndpointService } from './endpoint.service.js';
export { DeliveryService } from './delivery.service.js';
export type { Resolver, WebhookSender } from './sender.js';

/** How the delivery worker (src/workers/delivery-worker.ts) makes deliveries. */
export interface DeliveryWorkerOptions {
  /** This process, as the holder of leases. */
  owner: string;
  /** How long a claimed delivery stays reserved; must exceed the attempt timeout by a wide margin. */
  leaseMs: number;
  /** Attempts in flight per endpoint, across every worker sharing the database. */
  perEndpointConcurrency: number;
  /** Attempts in flight in this process. */
  maxInFlight: number;
  /** Background loop period. */
  pollIntervalMs: number;
  /** Events fanned out per transaction. */
  dispatchBatch: number;
  /**
   * SQLite: deliveries added to their clients' listing index in one transaction, when this many
   * wait (and whatever waits once the worker is idle).
   */
  listBatch: number;
  /** Header brand: `cauri` gives X-Cauri-Signature and Cauri-Webhooks/1.0. */
  serviceName: string;
}

/** What a delivery worker of this module is built from (see createDeliveryWorker in src/workers/). */
export interface DeliveryDeps {
  db: Kysely<Database>;
  dialect: DialectName;
  secrets: EndpointSecrets;
  sender: WebhookSender;
  clock: Clock;
  options: DeliveryWorkerOptions;
  log: FastifyBaseLogger;
}

/** docs/webhooks.md: each attempt times out after 10 s. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;

export interface WebhookOptions extends Omit<DeliveryWorkerOptions, 'serviceName'> {
  /** Per attempt; default 10 s. */
  timeoutMs: number;
  /** Sandbox: allow private and loopback receivers, at registration and delivery (default true). */
  allowPrivateInSandbox: boolean;
  maxEndpoints: number;
  /** Name resolution of receivers (tests point names at chosen addresses). */
  resolve?: Resolver;
  /** Replaces the HTTP sender altogether. */
  sender?: WebhookSender;
}

export interface WebhookDeps {
  config: Pick<Config, 'mode' | 'livemode' | 'serviceName'>;
  storage: Pick<Storage, 'db' | 'dialect' | 'transact'>;
  clock: Clock;
  masterKey: Buffer;
  idempotency: IdempotencyService;
  cursors: CursorCodec;
  log: FastifyBaseLogger;
  options?: Partial<WebhookOptions>;
}

export interface Webhooks {
  readonly service: { readonly endpoints: EndpointService; readonly deliveries: DeliveryService };
  /** Every webhook and event route; register with `app.register(webhooks.routes)`. */
  readonly routes: FastifyPluginAsyncTypebox;
  /** What its delivery worker is built from; the worker itself is a loop of src/workers/. */
  readonly delivery: DeliveryDeps;
}

export function defaultWebhookOptions(): WebhookOptions {
  return {
    timeoutMs: DEFAULT_ATTEMPT_TIMEOUT_MS,
    allowPrivateInSandbox: true,
    maxEndpoints: MAX_ENDPOINTS_PER_CLIENT,
    owner: `${process.pid}-${randomBytes(4).toString('hex')}`,
    // Six times the attempt timeout: a lease lapses only when its worker died mid-attempt.
    leaseMs: 60_000,
    perEndpointConcurrency: 4,
    maxInFlight: 64,
    pollIntervalMs: 500,
    dispatchBatch: 200,
    listBatch: 1_000,
  };
}

/**
 * The webhooks module, wired: its services, its routes and what its delivery worker is built from.
 * The composition root registers the routes, and builds and starts the worker where workers run; a
 * worker-only process uses the worker alone.
 */
export function createWebhooks(deps: WebhookDeps): Webhooks {
  const options: WebhookOptions = { ...defaultWebhookOptions(), ...deps.options };
  const { db, dialect } = deps.storage;
  const { mode, livemode, serviceName } = deps.config;
  const secrets = new EndpointSecrets(deriveKey(deps.masterKey, 'webhook-secrets'));
  const endpoints = new EndpointService(secrets, deps.clock, {
    mode,
    livemode,
    dialect,
    serviceName,
    allowPrivateInSandbox: options.allowPrivateInSandbox,
    maxEndpoints: options.maxEndpoints,
  });
  const deliveries = new DeliveryService(deps.clock);
  const publicOnly = mode === 'production' || !options.allowPrivateInSandbox;
  const sender =
    options.sender ??
    new UndiciSender({ timeoutMs: options.timeoutMs, publicOnly, ...(options.resolve === undefined ? {} : { resolve: options.resolve }) });
  const delivery: DeliveryDeps = { db, dialect, secrets, sender, clock: deps.clock, options: { ...options, serviceName }, log: deps.log };
  const routes: FastifyPluginAsyncTypebox = async (app) => {
    await app.register(webhookRoutes, {
      db,
      transact: deps.storage.transact,
      endpoints,
      deliveries,
      idempotency: deps.idempotency,
      cursors: deps.cursors,
    });
    await app.register(eventRoutes, { db, deliveries, cursors: deps.cursors });
  };
  return { service: { endpoints, deliveries }, routes, delivery };
}

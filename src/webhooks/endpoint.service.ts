import type { Kysely } from 'kysely';
import type { Mode } from '../config/config.js';
import { recordEvent } from '../events/event.service.js';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import { ApiError, notFound, validationError } from '../lib/errors.js';
import { isId, newId, type ClientId } from '../lib/ids.js';
import { lockForTransaction, type DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { checkEndpointUrl } from './core/address.js';
import { newDeliveryRow } from './core/fan-out.js';
import { serializeEnvelope } from '../events/envelope.js';
import { sampleEventData } from './core/payload.js';
import { generateEndpointSecret } from './core/signature.js';
import { cancelPending } from './delivery-listing.repository.js';
import { insertDeliveries, insertMessages } from './delivery.repository.js';
import {
  countClientEndpoints,
  findClientEndpoint,
  insertEndpoint,
  listClientEndpoints,
  updateEndpoint,
  type PageRequest,
} from './endpoint.repository.js';
import { pageOf, toDelivery, toEndpoint, type Page } from './mapping.js';
import type { EndpointSecrets } from './secrets.js';
import type {
  SecretRotation,
  TestEventRequest,
  TestEventResponse,
  SampleEventResponse,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointRequest,
  WebhookEndpointUpdate,
} from './webhook.schemas.js';
import type { WebhookEndpointRow } from './webhook.table.js';

/** docs/webhooks.md: at most 16 endpoints per client. */
export const MAX_ENDPOINTS_PER_CLIENT = 16;

/**
 * A disabled endpoint gets no new deliveries (its pending ones wait until it is enabled), so a test
 * or a resend that names one is refused rather than left waiting unseen.
 */
export function endpointDisabled(id: string): ApiError {
  return new ApiError('conflict', `Webhook endpoint ${id} is disabled; enable it first (PATCH disabled: false)`);
}

/** How long the secret before a rotation keeps signing deliveries beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointServiceOptions {
  mode: Mode;
  /** `livemode` of a test event when the request does not say. */
  livemode: boolean;
  dialect: DialectName;
  /** Issuer name used in sample data. */
  serviceName: string;
  /** Sandbox: accept private and loopback receivers (local development). Production never does. */
  allowPrivateInSandbox: boolean;
  maxEndpoints: number;
}

/**
 * The endpoint use cases. Each runs in the caller's transaction (the route's idempotent one for
 * POSTs), so an endpoint, its events and its idempotency record commit together.
 */
export class EndpointService {
  constructor(
    private readonly secrets: EndpointSecrets,
    private readonly clock: Clock,
    private readonly options: EndpointServiceOptions,
  ) {}

  #checkUrl(url: string): void {
    const check = checkEndpointUrl(url, this.options.mode, { allowPrivateInSandbox: this.options.allowPrivateInSandbox });
    if (!check.ok)
      throw validationError([{ field: 'url', rule: check.rule, value: url, message: check.message }], `Invalid url: ${check.message}`);
  }

  async #find(db: Kysely<Database>, clientId: ClientId, id: string): Promise<WebhookEndpointRow> {
    const row = isId('webhookEndpoint', id) ? await findClientEndpoint(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Webhook endpoint', id);
    return row;
  }

  async create(trx: Kysely<Database>, clientId: ClientId, request: WebhookEndpointRequest): Promise<WebhookEndpointCreated> {
    this.#checkUrl(request.url);
    // Serialises concurrent creations by one client, so that together they cannot pass the limit.
    await lockForTransaction(trx, this.options.dialect, `webhook-endpoints:${clientId}`);
    const count = await countClientEndpoints(trx, clientId);
    if (count >= this.options.maxEndpoints) {
      throw validationError(
        [
          {
            field: 'body',
            rule: 'max_endpoints',
            value: count,
            message: `a client may have at most ${this.options.maxEndpoints} webhook endpoints`,
          },
        ],
        `A client may have at most ${this.options.maxEndpoints} webhook endpoints; delete one first`,
      );
    }
    const now = this.clock.now().getTime();
    const id = newId('webhookEndpoint', now);
    const secret = generateEndpointSecret();
    const row: WebhookEndpointRow = {
      id,
      client_id: clientId,
      url: request.url,
      events: JSON.stringify(request.events),
      description: request.description ?? null,
      disabled: 0,
      secret_sealed: this.secrets.seal(id, secret),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await insertEndpoint(trx, row);
    return { ...toEndpoint(row), secret };
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.#find(db, clientId, id));
  }

  async list(db: Kysely<Database>, clientId: ClientId, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    const result = pageOf(await listClientEndpoints(db, clientId, page), page);
    return { ...result, items: result.items.map(toEndpoint) };
  }

  async update(trx: Kysely<Database>, clientId: ClientId, id: string, update: WebhookEndpointUpdate): Promise<WebhookEndpoint> {
    const row = await this.#find(trx, clientId, id);
    if (update.url !== undefined) this.#checkUrl(update.url);
    const changes: Partial<WebhookEndpointRow> = { updated_at: this.clock.now().getTime() };
    if (update.url !== undefined) changes.url = update.url;
    if (update.events !== undefined) changes.events = JSON.stringify(update.events);
    if (update.description !== undefined) changes.description = update.description;
    if (update.disabled !== undefined) changes.disabled = update.disabled ? 1 : 0;
    await updateEndpoint(trx, id, changes);
    return toEndpoint({ ...row, ...changes });
  }

  /** Deletes the endpoint and stops its pending deliveries; their history stays listable. */
  async delete(trx: Kysely<Database>, clientId: ClientId, id: string): Promise<void> {
    await this.#find(trx, clientId, id);
    const now = this.clock.now().getTime();
    await updateEndpoint(trx, id, { deleted_at: now, updated_at: now, previous_secret_sealed: null, previous_secret_expires_at: null });
    await cancelPending(trx, id, now);
  }

  /**
   * Issues a new secret. For the next 24 h deliveries are signed with both, new first; a second
   * rotation within that window drops the oldest secret at once.
   */
  async rotateSecret(trx: Kysely<Database>, clientId: ClientId, id: string): Promise<SecretRotation> {
    const row = await this.#find(trx, clientId, id);
    const now = this.clock.now().getTime();
    const secret = generateEndpointSecret();
    const changes: Partial<WebhookEndpointRow> = {
      secret_sealed: this.secrets.seal(id, secret),
      previous_secret_sealed: row.secret_sealed,
      previous_secret_expires_at: now + ROTATION_OVERLAP_MS,
      updated_at: now,
    };
    await updateEndpoint(trx, id, changes);
    return { ...toEndpoint({ ...row, ...changes }), secret, previous_secret_expires_at: isoMillis(now + ROTATION_OVERLAP_MS) };
  }

  /**
   * Stores a sample event of the chosen type, like any other event, and a delivery of it to this
   * endpoint only: the event is never queued for the fan-out, so the worker never sends it to the
   * client's other endpoints.
   */
  async sendTest(trx: Kysely<Database>, clientId: ClientId, id: string, request: TestEventRequest): Promise<TestEventResponse> {
    const endpoint = await this.#find(trx, clientId, id);
    if (endpoint.disabled === 1) throw endpointDisabled(endpoint.id);
    const at = this.clock.now();
    const type = request.type ?? 'webhook.test';
    const data = sampleEventData(type, { at, endpointId: endpoint.id, issuer: this.options.serviceName });
    const event = await recordEvent(trx, {
      clientId,
      type,
      data,
      livemode: request.livemode ?? this.options.livemode,
      at,
      subjectRef: endpoint.id,
      fanOut: false,
    });
    const now = at.getTime();
    const delivery = newDeliveryRow(event, endpoint, now);
    await insertMessages(trx, [{ event_id: event.id, body: serializeEnvelope(event), created_at: now }]);
    await insertDeliveries(trx, [delivery]);
    return { event: { ...event, data: data as unknown as Record<string, unknown> }, delivery: toDelivery(delivery, []) };
  }

  /**
   * Stores a sample event of the chosen type as the client's own event: it is fanned out like any
   * other, to the client's endpoints subscribed to its type, and it appears on the event stream (so
   * a running `cauri listen` forwards it), whether or not the client has an endpoint.
   */
  async sendSample(trx: Kysely<Database>, clientId: ClientId, request: TestEventRequest): Promise<SampleEventResponse> {
    const at = this.clock.now();
    const type = request.type ?? 'webhook.test';
    const data = sampleEventData(type, { at, endpointId: null, issuer: this.options.serviceName });
    const event = await recordEvent(trx, { clientId, type, data, livemode: request.livemode ?? this.options.livemode, at, fanOut: true });
    return { event: { ...event, data: data as unknown as Record<string, unknown> } };
  }
}

import type { Kysely } from 'kysely';
import { envelopeOf } from '../events/event.service.js';
import type { Clock } from '../lib/clock.js';
import { ApiError, notFound } from '../lib/errors.js';
import { isId, type ClientId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import {
  attemptsOf,
  findClientDelivery,
  findClientEvent,
  listClientDeliveries,
  listClientEvents,
  requeueDead,
  type DeliveryFilter,
} from './delivery-listing.repository.js';
import { findClientEndpoint, type PageRequest } from './endpoint.repository.js';
import { pageOf, toDelivery, type Page } from './mapping.js';
import type { Delivery, EventEnvelope } from './webhook.schemas.js';

/** Reading deliveries (with their attempts) and events, and replaying dead letters. */
export class DeliveryService {
  constructor(private readonly clock: Clock) {}

  async #withAttempts(db: Kysely<Database>, rows: Parameters<typeof toDelivery>[0][]): Promise<Delivery[]> {
    const attempts = await attemptsOf(
      db,
      rows.map((r) => r.id),
    );
    const byDelivery = new Map<string, typeof attempts>();
    for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
    return rows.map((r) => toDelivery(r, byDelivery.get(r.id) ?? []));
  }

  async list(db: Kysely<Database>, clientId: ClientId, filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    const result = pageOf(await listClientDeliveries(db, clientId, filter, page), page);
    return { ...result, items: await this.#withAttempts(db, result.items) };
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<Delivery> {
    const row = isId('delivery', id) ? await findClientDelivery(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Webhook delivery', id);
    return (await this.#withAttempts(db, [row]))[0] as Delivery;
  }

  /**
   * Gives a dead delivery one new attempt, due now: signed afresh, same body, same event id and
   * idempotency key. If it fails the delivery is dead again. A delivery that is not dead is 409.
   */
  async replay(trx: Kysely<Database>, clientId: ClientId, id: string): Promise<Delivery> {
    const row = isId('delivery', id) ? await findClientDelivery(trx, clientId, id) : undefined;
    if (row === undefined) throw notFound('Webhook delivery', id);
    if (row.status !== 'dead') throw new ApiError('conflict', `Delivery ${id} is ${row.status}; only a dead delivery can be replayed`);
    const now = this.clock.now().getTime();
    await requeueDead(trx, { id }, now);
    return this.get(trx, clientId, id);
  }

  /** Replays every dead delivery of one of the client's endpoints; returns how many. */
  async replayDead(trx: Kysely<Database>, clientId: ClientId, endpointId: string): Promise<number> {
    const endpoint = isId('webhookEndpoint', endpointId) ? await findClientEndpoint(trx, clientId, endpointId) : undefined;
    if (endpoint === undefined) throw notFound('Webhook endpoint', endpointId);
    return requeueDead(trx, { endpointId }, this.clock.now().getTime());
  }

  async listEvents(db: Kysely<Database>, clientId: ClientId, type: string | undefined, page: PageRequest): Promise<Page<EventEnvelope>> {
    const result = pageOf(await listClientEvents(db, clientId, type, page), page);
    return { ...result, items: result.items.map((row) => envelopeOf(row) as EventEnvelope) };
  }

  async getEvent(db: Kysely<Database>, clientId: ClientId, id: string): Promise<EventEnvelope> {
    const row = isId('event', id) ? await findClientEvent(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Event', id);
    return envelopeOf(row) as EventEnvelope;
  }
}

import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { ApiError, notFound } from '../lib/errors.js';
import { isId, type ClientId } from '../lib/ids.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { storedEnvelopeBody } from '../events/envelope.js';
import { listClientDeliveries } from './delivery-listing.repository.js';
import { findMessages, insertDeliveries, insertMessages, isQueued } from './delivery.repository.js';
import type { DeliveryService } from './delivery.service.js';
import { newDeliveryRow } from './core/fan-out.js';
import { findClientEndpoint, listClientEndpoints } from './endpoint.repository.js';
import { lockClientEvent, requeueSettled } from './resend.repository.js';
import { endpointDisabled } from './endpoint.service.js';
import type { Delivery } from './webhook.schemas.js';
import type { WebhookEndpointRow } from './webhook.table.js';

/** More than the per-client endpoint limit (16): one read returns them all. */
const ENDPOINTS_READ = 1000;

export interface ResendResult {
  event_id: string;
  deliveries: Delivery[];
}

/**
 * Sends a stored event again. A delivery is one event to one endpoint (unique pair), so for each
 * target endpoint:
 * - no delivery yet: one is created, due now, exactly as the fan-out would have made it;
 * - a settled one (succeeded or dead): it is made due now, same idempotency key, its schedule
 *   restarted (see `requeueSettled`);
 * - a pending one: it is already on its way and is left as it is.
 * Targets: the endpoint named (subscribed to the type or not, like a test event), or else every
 * enabled endpoint of the client subscribed to the event's type. A disabled endpoint gets no new
 * deliveries: naming one is 409.
 */
export class EventResendService {
  constructor(
    private readonly deliveries: DeliveryService,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
  ) {}

  async resend(trx: Kysely<Database>, clientId: ClientId, eventId: string, endpointId: string | undefined): Promise<ResendResult> {
    const event = isId('event', eventId) ? await lockClientEvent(trx, this.dialect, clientId, eventId) : undefined;
    if (event === undefined) throw notFound('Event', eventId);

    let targets: WebhookEndpointRow[];
    if (endpointId !== undefined) {
      const endpoint = isId('webhookEndpoint', endpointId) ? await findClientEndpoint(trx, clientId, endpointId) : undefined;
      if (endpoint === undefined) throw notFound('Webhook endpoint', endpointId);
      if (endpoint.disabled === 1) throw endpointDisabled(endpoint.id);
      targets = [endpoint];
    } else {
      // A disabled endpoint gets no new deliveries, so it is no target (docs/webhooks.md).
      targets = (await listClientEndpoints(trx, clientId, { limit: ENDPOINTS_READ })).filter(
        (e) => e.disabled === 0 && (JSON.parse(e.events) as string[]).includes(event.type),
      );
      if (targets.length === 0)
        throw new ApiError('conflict', `No enabled webhook endpoint subscribes to ${event.type}; name one with endpoint_id`);
    }
    // Until the fan-out has run it may still create this event's deliveries itself, and a second
    // delivery of the same pair would make it fail; it runs within a poll period.
    if (await isQueued(trx, event.id)) {
      throw new ApiError('conflict', `Event ${event.id} is still being fanned out to endpoints; retry in a moment`, {
        headers: { 'retry-after': '1' },
      });
    }

    const now = this.clock.now().getTime();
    const existing = new Map(
      (await listClientDeliveries(trx, clientId, { eventId: event.id }, { limit: ENDPOINTS_READ })).map((d) => [d.endpoint_id, d]),
    );
    const fresh = targets.filter((e) => !existing.has(e.id)).map((e) => newDeliveryRow(event, e, now));
    if (fresh.length > 0 && !(await findMessages(trx, [event.id])).has(event.id)) {
      // Events that matched no endpoint at fan-out have no stored body yet; it is serialised now, once.
      await insertMessages(trx, [{ event_id: event.id, body: storedEnvelopeBody(event), created_at: now }]);
    }
    await insertDeliveries(trx, fresh);
    const ids: string[] = [];
    for (const endpoint of targets) {
      const delivery = existing.get(endpoint.id);
      if (delivery === undefined) continue;
      await requeueSettled(trx, delivery.id, now);
      ids.push(delivery.id);
    }
    ids.push(...fresh.map((d) => d.id));
    const out: Delivery[] = [];
    for (const id of ids) out.push(await this.deliveries.get(trx, clientId, id));
    return { event_id: event.id, deliveries: out };
  }
}

import type { Static, TSchema } from '@sinclair/typebox';
import { AuditSnapshot } from '../audit/audit.schemas.js';
import type { EventType } from '../events/event.types.js';
import { KycAttestation, RevocationEvent } from '../kyc/kyc.schemas.js';
import { Order, OrderExecutedEvent } from '../orders/order.schemas.js';
import { PositionBreakEvent } from '../positions/position.schemas.js';
import { WebhookTestEventData } from './webhook.schemas.js';

/**
 * The schema of the `data` member of each event type (docs/webhooks.md). Each is declared beside
 * the resource it reports, in the domain that records the event; an order event carries the Order
 * itself. The catalogue sits here, above those domains, because events/ is below them: they record
 * events through it.
 */
export const EVENT_DATA = {
  'order.created': Order,
  'order.routed': Order,
  'order.failed': Order,
  'order.cancelled': Order,
  'order.amended': Order,
  'order.request_refused': Order,
  'order.executed': OrderExecutedEvent,
  'position.break': PositionBreakEvent,
  'kyc.attested': KycAttestation,
  'kyc.revoked': RevocationEvent,
  'audit.snapshot': AuditSnapshot,
  'webhook.test': WebhookTestEventData,
} as const satisfies Record<EventType, TSchema>;

/** The `data` member of each event type. */
export type EventDataByType = { [K in EventType]: Static<(typeof EVENT_DATA)[K]> };

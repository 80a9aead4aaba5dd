import type { ClientId, EventId } from '../lib/ids.js';

export const EVENT_TYPES = [
  'order.created',
  'order.routed',
  'order.executed',
  'order.failed',
  'order.cancelled',
  'order.amended',
  'order.request_refused',
  'position.break',
  'kyc.attested',
  'kyc.revoked',
  'audit.snapshot',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The specification's envelope, common to every event. */
export interface EventEnvelope<T = unknown> {
  id: EventId;
  type: EventType;
  /** Date-time with milliseconds. */
  created_at: string;
  data: T;
  livemode: boolean;
}

export interface NewEvent<T = unknown> {
  clientId: ClientId | null;
  type: EventType;
  data: T;
  livemode: boolean;
  at: Date;
  /** The order or attestation the event is about, to list one object's history. */
  subjectRef?: string;
  /**
   * Whether the webhook fan-out takes the event (default true); false when the caller creates its
   * deliveries itself in the same transaction (a test event, sent to one endpoint only).
   */
  fanOut?: boolean;
}

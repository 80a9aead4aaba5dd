import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../events/event.types.js';
import { DateTime, Nullable, PageQuery, QueryObject, StringEnum } from '../http/schemas.js';

/** Longest endpoint description, in characters. */
export const MAX_DESCRIPTION_LENGTH = 1024;

export const EventTypeSchema = StringEnum(EVENT_TYPES, { description: "An event type of the specification's Events section." });

const EventList = Type.Array(EventTypeSchema, {
  minItems: 1,
  uniqueItems: true,
  description: 'Event types the endpoint subscribes to; at least one, no repeats.',
});

// The URL is only typed here: its rules (length, scheme, address) are checked by checkEndpointUrl, so
// that each refusal names the same rule at registration and at update.
const Url = Type.String({ description: 'Absolute http(s) URL of the receiver (https only in production).' });

export const WebhookEndpointRequest = Type.Object(
  {
    url: Url,
    events: EventList,
    description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_LENGTH })),
  },
  { additionalProperties: false, title: 'WebhookEndpointRequest' },
);
export type WebhookEndpointRequest = Static<typeof WebhookEndpointRequest>;

export const WebhookEndpointUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventList),
    description: Type.Optional(Nullable(Type.String({ maxLength: MAX_DESCRIPTION_LENGTH }))),
    disabled: Type.Optional(
      Type.Boolean({ description: 'A disabled endpoint gets no new deliveries; its pending ones wait until it is enabled again.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'WebhookEndpointUpdate' },
);
export type WebhookEndpointUpdate = Static<typeof WebhookEndpointUpdate>;

const endpointFields = {
  id: Type.String({ description: 'Endpoint identifier (we_...)' }),
  url: Type.String(),
  events: Type.Array(EventTypeSchema),
  description: Type.Optional(Type.String()),
  disabled: Type.Boolean(),
  created_at: DateTime('Creation time, with milliseconds'),
  updated_at: DateTime(),
};

/** An endpoint as listed and read: never with its secret. */
export const WebhookEndpoint = Type.Object(endpointFields, { title: 'WebhookEndpoint' });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** The creation response: the endpoint and its secret, which is shown only here. */
export const WebhookEndpointCreated = Type.Object(
  { ...endpointFields, secret: Type.String({ description: 'Signing secret (whsec_...). Returned only in this response.' }) },
  { title: 'WebhookEndpointCreated' },
);
export type WebhookEndpointCreated = Static<typeof WebhookEndpointCreated>;

export const SecretRotation = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ description: 'The new signing secret. Returned only in this response.' }),
    previous_secret_expires_at: DateTime("Until then each delivery carries two v1= signatures: the new secret's, then the old one's."),
  },
  { title: 'WebhookSecretRotation' },
);
export type SecretRotation = Static<typeof SecretRotation>;

export const TestEventRequest = Type.Object(
  {
    type: Type.Optional(StringEnum(EVENT_TYPES, { description: 'Event type of the sample; default webhook.test.' })),
    livemode: Type.Optional(Type.Boolean({ description: "livemode of the sample event; default the deployment's." })),
  },
  { additionalProperties: false, title: 'WebhookTestEventRequest' },
);
export type TestEventRequest = Static<typeof TestEventRequest>;

export const EventEnvelope = Type.Object(
  {
    id: Type.String({ description: 'Event identifier (evt_...)' }),
    type: EventTypeSchema,
    created_at: DateTime('With milliseconds'),
    data: Type.Object({}, { additionalProperties: true }),
    livemode: Type.Boolean(),
  },
  { title: 'Event' },
);
export type EventEnvelope = Static<typeof EventEnvelope>;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'dead', 'cancelled'] as const;

export const DeliveryAttempt = Type.Object(
  {
    attempted_at: DateTime(),
    status_code: Nullable(Type.Integer({ description: 'HTTP status of the response; null when none came.' })),
    duration_ms: Type.Integer(),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null on success.' })),
  },
  { title: 'WebhookDeliveryAttempt' },
);

export const Delivery = Type.Object(
  {
    id: Type.String({ description: 'Delivery identifier (del_...)' }),
    event_id: Type.String(),
    event_type: EventTypeSchema,
    endpoint_id: Type.String(),
    idempotency_key: Type.String({
      format: 'uuid',
      description: 'The idempotency header of every attempt (`X-<Service-Name>-Idempotency-Key`, named in the webhooks section).',
    }),
    status: StringEnum(DELIVERY_STATUSES, {
      description:
        'pending (an attempt is due), succeeded (a 2xx), dead (the +24 h attempt failed: dead-letter queue), cancelled (the endpoint was deleted).',
    }),
    next_attempt_at: Nullable(DateTime('When the next attempt is due; null unless pending.')),
    created_at: DateTime(),
    updated_at: DateTime(),
    attempts: Type.Array(DeliveryAttempt),
  },
  { title: 'WebhookDelivery' },
);
export type Delivery = Static<typeof Delivery>;

export const TestEventResponse = Type.Object({ event: EventEnvelope, delivery: Delivery }, { title: 'WebhookTestEvent' });
export type TestEventResponse = Static<typeof TestEventResponse>;

export const SampleEventResponse = Type.Object({ event: EventEnvelope }, { title: 'SampleEvent' });
export type SampleEventResponse = Static<typeof SampleEventResponse>;

export const ReplayDeadResponse = Type.Object(
  { endpoint_id: Type.String(), replayed: Type.Integer({ description: 'Dead deliveries given a new attempt.' }) },
  { title: 'WebhookReplayDead' },
);

export const EndpointListQuery = QueryObject(PageQuery);
export type EndpointListQuery = Static<typeof EndpointListQuery>;

export const DeliveryListQuery = QueryObject({
  ...PageQuery,
  endpoint_id: Type.Optional(Type.String({ maxLength: 64 })),
  event_id: Type.Optional(Type.String({ maxLength: 64 })),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const EventListQuery = QueryObject({ ...PageQuery, type: Type.Optional(EventTypeSchema) });
export type EventListQuery = Static<typeof EventListQuery>;

/** The data of a `webhook.test` event. */
export const WebhookTestEventData = Type.Object(
  {
    message: Type.String(),
    endpoint_id: Nullable(
      Type.String({ description: "The endpoint it was sent to; null when it was sent to the client's subscribers and event stream." }),
    ),
  },
  { title: 'WebhookTestEventData' },
);
export type WebhookTestEventData = Static<typeof WebhookTestEventData>;

import { Type } from '@sinclair/typebox';
import { EVENT_TYPES, type EventType } from '../events/event.types.js';
import { headerBrand } from './attempt.js';
import { EVENT_DATA } from './event-data.js';
import { EventEnvelope } from './webhook.schemas.js';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, named by the type, describing the
 * POST a delivery makes to an endpoint: its headers and its body, the envelope with that type's
 * `data` (docs/webhooks.md). Generated clients get a typed body for each event from it.
 */

/** When each event type is recorded (its entry's summary). */
const WHEN: Record<EventType, string> = {
  'order.created': 'An order was accepted and stored.',
  'order.routed': 'The partner took the order.',
  'order.executed': 'An execution of the order (partial or last).',
  'order.failed': 'The partner or the exchange refused the order.',
  'order.cancelled':
    'The order was cancelled, whatever the reason: at the client’s request, at expiry, the unfilled rest of an ioc or fok order, or by the partner.',
  'order.amended': 'An amend took effect at the partner.',
  'order.request_refused': 'The partner refused a cancel or an amend.',
  'position.break': 'A statement of holdings disagrees with the fills since its date.',
  'kyc.attested': 'An attestation was issued.',
  'kyc.revoked': 'An attestation was revoked.',
  'audit.snapshot': 'A day’s audit snapshot was anchored (sent to every client).',
  'webhook.test': 'A test event without a type was sent.',
};

const header = (name: string, required: boolean, description: string, pattern?: string) => ({
  name,
  in: 'header',
  required,
  description,
  schema: pattern === undefined ? { type: 'string' } : { type: 'string', pattern },
});

/** The headers of every delivery attempt, named after the service as the delivery worker names them. */
function deliveryHeaders(serviceName: string) {
  const brand = headerBrand(serviceName);
  return [
    header(
      `X-${brand}-Signature`,
      true,
      '`t=<unix seconds>,v1=<hex>`: HMAC-SHA-256 with the endpoint secret over `<t>.` and the raw body (two `v1` during a secret rotation, new then old). Verify it before reading the body, and refuse a `t` more than 300 seconds from now.',
      '^t=\\d+(,v1=[0-9a-f]{64})+$',
    ),
    header(
      `X-${brand}-Idempotency-Key`,
      true,
      'The same UUID on every attempt and replay of one event to one endpoint: deduplicate on it.',
    ),
    header('User-Agent', true, `\`${brand}-Webhooks/1.0\`.`),
    header('traceparent', true, 'W3C trace context of this attempt, in the trace of what caused the event.'),
    header('tracestate', false, 'The `tracestate` of the request that caused the event, when it sent one.'),
    header('X-Request-Id', false, 'The id of the API request that caused the event, when one did.'),
  ];
}

/**
 * The schema as the route generator writes the routes' schemas, where `const: x` becomes
 * `enum: [x]`: a schema shared with a route (the Order, the attestation) must come out identical to
 * be named once in `components.schemas`.
 */
function asGenerated(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asGenerated);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'const') out.enum = [value];
    else out[key] = asGenerated(value);
  }
  return out;
}

/**
 * The `webhooks` member of the OpenAPI document, in the order of the event types. Its header names
 * carry the service name (`CAURI_SERVICE_NAME`), as the deliveries do.
 */
export function webhooksSection(serviceName: string): Record<string, { post: Record<string, unknown> }> {
  const parameters = deliveryHeaders(serviceName);
  const entries = EVENT_TYPES.map((type) => {
    const body = Type.Intersect([EventEnvelope, Type.Object({ type: Type.Literal(type), data: EVENT_DATA[type] })]);
    const post = {
      operationId: `receive_${type.replace('.', '_')}`,
      summary: WHEN[type],
      description: `A delivery of an event of type \`${type}\` to an endpoint subscribed to it. The body is the event envelope, with the \`data\` of this type, sent byte for byte the same on every attempt.`,
      tags: ['Webhooks'],
      parameters,
      requestBody: { required: true, content: { 'application/json': { schema: asGenerated(JSON.parse(JSON.stringify(body))) } } },
      security: [],
      responses: {
        '2XX': { description: 'Received: any 2xx status within 10 seconds ends the delivery.' },
        '4XX': {
          description: 'A failure (as is any other status, a redirect, or no answer in time): the delivery is retried on its schedule.',
        },
      },
    };
    return [type, { post }] as const;
  });
  return Object.fromEntries(entries);
}

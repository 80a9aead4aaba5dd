import { isoMillis } from '../lib/clock.js';
import type { EventType } from '../events/event.types.js';
import type { PageRequest } from './endpoint.repository.js';
import type { Delivery, WebhookEndpoint } from './webhook.schemas.js';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from './webhook.table.js';

/** Rows to the API's shapes, and the keyset paging shared by the module's listings. */

export function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    // Omitted rather than null: the specification types `description` as a string.
    ...(row.description === null ? {} : { description: row.description }),
    disabled: row.disabled === 1,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}

export function toDelivery(row: WebhookDeliveryRow, attempts: readonly WebhookAttemptRow[]): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    endpoint_id: row.endpoint_id,
    idempotency_key: row.idempotency_key,
    status: row.status,
    next_attempt_at: row.next_attempt_at === null ? null : isoMillis(row.next_attempt_at),
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
    attempts: attempts.map((a) => ({
      attempted_at: isoMillis(a.attempted_at),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
    })),
  };
}

export interface Page<T> {
  items: T[];
  /** Id to continue from towards older rows, or null on the last page. */
  older: string | null;
  /** Id to go back from towards newer rows, or null on the first page. */
  newer: string | null;
}

/**
 * Turns the limit + 1 rows of a keyset query into a page shown newest first. Rows fetched with
 * `after` come oldest first (towards newer rows) and are reversed.
 */
export function pageOf<R extends { id: string }>(rows: R[], page: PageRequest): Page<R> {
  const more = rows.length > page.limit;
  const slice = rows.slice(0, page.limit);
  if (page.after !== undefined) {
    slice.reverse();
    return { items: slice, older: slice.at(-1)?.id ?? null, newer: more ? (slice[0]?.id ?? null) : null };
  }
  return {
    items: slice,
    older: more ? (slice.at(-1)?.id ?? null) : null,
    newer: page.before !== undefined ? (slice[0]?.id ?? null) : null,
  };
}

import type { Kysely } from 'kysely';
import { storedEnvelopeBody } from '../events/envelope.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import type { Launch, Slots } from './core/fan-out.js';
import {
  dueCandidates,
  dueCandidatesBounded,
  findEvents,
  findMessagesWithOrigins,
  insertMessages,
  leaseDeliveries,
} from './delivery.repository.js';
import { findEndpoints } from './endpoint.repository.js';

export interface ClaimLimits {
  perEndpointConcurrency: number;
  leaseMs: number;
  owner: string;
}

export interface ClaimResult {
  launches: Launch[];
  /**
   * Due deliveries may be left: the scan was cut short, or some candidates were not leased; null when
   * there was no free slot to claim for, so nothing was learnt.
   */
  mayBeDue: boolean | null;
}

/**
 * Leases due deliveries within `slots` (updating them) in `trx`, with their endpoints and bodies:
 * the earliest due first, at most `perEndpointConcurrency` in flight per endpoint across workers.
 */
export async function claimIn(
  trx: Kysely<Database>,
  dialect: DialectName,
  slots: Slots,
  now: number,
  limits: ClaimLimits,
): Promise<ClaimResult> {
  const capacity = slots.free;
  if (capacity <= 0) return { launches: [], mayBeDue: null };
  const { perEndpointConcurrency } = limits;
  const { busy } = slots;
  // The earliest due deliveries first, without reading the whole backlog; the full query only when
  // an endpoint with free slots may have due deliveries beyond that scan (so none waits behind
  // another endpoint's backlog).
  const bounded = await dueCandidatesBounded(trx, now, perEndpointConcurrency, capacity * 2, Math.max(256, capacity * 16));
  let candidates = bounded.rows;
  if (bounded.truncated) {
    const seen = new Set(candidates.map((c) => c.endpoint_id));
    const others = [...bounded.enabled].some((id) => !seen.has(id) && (busy.get(id) ?? 0) < perEndpointConcurrency);
    if (others || candidates.length === 0) candidates = await dueCandidates(trx, now, perEndpointConcurrency, capacity * 2);
  }
  // Whatever this claim does not lease waits for the next one.
  if (candidates.length === 0) return { launches: [], mayBeDue: bounded.truncated };
  const chosen: string[] = [];
  const planned = new Map<string, number>();
  for (const candidate of candidates) {
    const n = (busy.get(candidate.endpoint_id) ?? 0) + (planned.get(candidate.endpoint_id) ?? 0);
    if (n >= perEndpointConcurrency) continue;
    planned.set(candidate.endpoint_id, (planned.get(candidate.endpoint_id) ?? 0) + 1);
    chosen.push(candidate.id);
    if (chosen.length >= capacity) break;
  }
  const leased = await leaseDeliveries(trx, dialect, chosen, now, limits.leaseMs, limits.owner);
  const mayBeDue = bounded.truncated || leased.length < candidates.length;
  if (leased.length === 0) return { launches: [], mayBeDue };
  for (const delivery of leased) busy.set(delivery.endpoint_id, (busy.get(delivery.endpoint_id) ?? 0) + 1);
  slots.free -= leased.length;
  const endpoints = new Map((await findEndpoints(trx, [...new Set(leased.map((d) => d.endpoint_id))])).map((e) => [e.id, e]));
  const eventIds = [...new Set(leased.map((d) => d.event_id))];
  // The bodies, with the origin of their events (for the trace headers), in one read.
  const messages = await findMessagesWithOrigins(trx, eventIds);
  const missing = eventIds.filter((id) => !messages.has(id));
  if (missing.length > 0) {
    // A first attempt whose worker died before recording it: its body was never stored. It is
    // made again from the event, exactly as at fan-out, and stored for every attempt after this one.
    const events = await findEvents(trx, missing);
    const rebuilt = events.map((event) => ({ event_id: event.id, body: storedEnvelopeBody(event), created_at: now }));
    await insertMessages(trx, rebuilt);
    events.forEach((event, i) => {
      messages.set(event.id, { body: rebuilt[i]?.body as string, origin: event.origin ?? null });
    });
  }
  const launches = leased.map((delivery) => {
    const message = messages.get(delivery.event_id);
    return { delivery, endpoint: endpoints.get(delivery.endpoint_id), body: message?.body, stored: true, origin: message?.origin ?? null };
  });
  return { launches, mayBeDue };
}

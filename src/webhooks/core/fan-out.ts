import { randomUUID } from 'node:crypto';
import { storedEnvelopeBody } from '../../events/envelope.js';
import type { EventRow } from '../../events/event.table.js';
import { newId } from '../../lib/ids.js';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookMessageTable } from '../webhook.table.js';

/** A new delivery of `event` to `endpoint`, due at `now`, listed, unleased. */
export function newDeliveryRow(
  event: { id: string; type: string },
  endpoint: Pick<WebhookEndpointRow, 'id' | 'client_id'>,
  now: number,
): WebhookDeliveryRow {
  return {
    id: newId('delivery', now),
    event_id: event.id,
    event_type: event.type,
    endpoint_id: endpoint.id,
    client_id: endpoint.client_id,
    // Fixed for the (event, endpoint) pair: every attempt and replay carries the same key.
    idempotency_key: randomUUID(),
    status: 'pending',
    attempts: 0,
    first_attempt_at: now,
    next_attempt_at: now,
    lease_until: null,
    lease_owner: null,
    last_attempt_at: null,
    created_at: now,
    updated_at: now,
    listed: 1,
  };
}

/** Slots a transaction may still lease: in this process, and per endpoint across workers. */
export interface Slots {
  free: number;
  busy: Map<string, number>;
}

/** A leased delivery with what its attempt needs, ready to start once its lease has committed. */
export interface Launch {
  delivery: WebhookDeliveryRow;
  endpoint: WebhookEndpointRow | undefined;
  body: string | undefined;
  /** Whether the body is stored (webhook_messages); if not, a failed attempt stores it with its record. */
  stored: boolean;
  /** The API request the event came from (events.origin), for the attempt's trace headers. */
  origin: string | null;
}

export interface FanOutLimits {
  /** Attempts in flight per endpoint, across every worker sharing the database. */
  perEndpointConcurrency: number;
  leaseMs: number;
  /** This process, as the holder of leases. */
  owner: string;
  /** Deliveries are created unlisted, to be added to their clients' listing index in batches. */
  deferListing: boolean;
}

/** What the fan-out of a batch of events writes, and the attempts it starts after the commit. */
export interface FanOutPlan {
  /** Events taken off the fan-out queue (those left wait for free slots). */
  taken: string[];
  /** Bodies to store: those of events with a delivery left to be claimed. */
  messages: WebhookMessageTable[];
  deliveries: WebhookDeliveryRow[];
  /** Deliveries inserted already leased to this worker, to be sent once the transaction commits. */
  launches: Launch[];
  /** Some delivery was left due for a claim: its endpoint was at its limit. */
  leftDue: boolean;
}

/**
 * The fan-out of `events` (oldest first) to `endpoints`, with no I/O: one delivery per endpoint of the
 * event's client (every client for a broadcast event) subscribed to its type and created no later
 * than the event, and the envelope's body serialised once per event.
 *
 * With `slots`, each delivery that fits in them is created already leased to this worker (nothing
 * else can see it before the commit, so it needs no lease step) and events are taken only while
 * slots are free; without, every delivery is created due and unleased.
 */
export function planFanOut(
  events: readonly EventRow[],
  endpoints: readonly WebhookEndpointRow[],
  now: number,
  slots: Slots | null,
  limits: FanOutLimits,
): FanOutPlan {
  const subscribed = endpoints.map((e) => ({ row: e, types: new Set(JSON.parse(e.events) as string[]) }));
  const { perEndpointConcurrency, leaseMs, owner, deferListing } = limits;
  const plan: FanOutPlan = { taken: [], messages: [], deliveries: [], launches: [], leftDue: false };
  for (const event of events) {
    // Events wait in order for free slots; locked ones left here are released at the commit.
    if (slots !== null && slots.free <= 0) break;
    plan.taken.push(event.id);
    // An endpoint receives the events created after it, not the backlog from before it existed.
    const targets = subscribed.filter(
      ({ row, types }) =>
        (event.client_id === null || row.client_id === event.client_id) && types.has(event.type) && row.created_at <= event.created_at,
    );
    if (targets.length === 0) continue;
    const body = storedEnvelopeBody(event);
    const leased: Launch[] = [];
    for (const { row: endpoint } of targets) {
      const delivery = newDeliveryRow(event, endpoint, now);
      if (deferListing) delivery.listed = 0;
      const busy = slots?.busy.get(endpoint.id) ?? 0;
      if (slots !== null && slots.free > 0 && busy < perEndpointConcurrency) {
        delivery.lease_until = now + leaseMs;
        delivery.lease_owner = owner;
        slots.free--;
        slots.busy.set(endpoint.id, busy + 1);
        leased.push({ delivery, endpoint, body, stored: false, origin: event.origin ?? null });
      } else if (slots !== null) {
        // Its endpoint is at its limit: it waits, due, for a claim.
        plan.leftDue = true;
      }
      plan.deliveries.push(delivery);
    }
    // The body is stored for the deliveries that wait to be claimed; one whose first attempt starts
    // at once carries it in memory, and stores it only if that attempt fails (most succeed).
    if (leased.length < targets.length) {
      plan.messages.push({ event_id: event.id, body, created_at: now });
      for (const launch of leased) launch.stored = true;
    }
    plan.launches.push(...leased);
  }
  return plan;
}

/**
 * How many events the next fan-out round reads, after a round that read `limit` and took them all
 * (`taken`), using `used` of the slots and leaving `free`: as many as the slots left would take at the
 * same ratio of events to slots, a whole batch when none took a slot, and at least `floor`.
 */
export function nextRoundLimit(dispatchBatch: number, floor: number, taken: number, used: number, free: number): number {
  return used === 0 ? dispatchBatch : Math.min(dispatchBatch, Math.max(floor, Math.ceil((free * taken) / used)));
}

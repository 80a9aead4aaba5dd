import type { Kysely } from 'kysely';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { nextRoundLimit, planFanOut, type FanOutLimits, type Launch, type Slots } from './core/fan-out.js';
import { dequeueEvents, insertDeliveries, insertMessages, lockPendingEvents } from './delivery.repository.js';
import { subscribableEndpoints } from './endpoint.repository.js';

/**
 * Free slots that make an ending attempt start a new claim, and the fewest events a fan-out round
 * reads: one claim then fills many slots, rather than one claim per attempt.
 */
export const REFILL_SLOTS = 16;
/** Fan-out rounds in one combined transaction at most. */
const FAN_OUT_ROUNDS = 4;

export interface FanOutResult {
  /** Events taken off the fan-out queue. */
  events: number;
  launches: Launch[];
  /** Deliveries inserted without their listing entry. */
  unlisted: number;
  /** Some delivery was left due for a claim. */
  leftDue: boolean;
}

/**
 * Fans out up to `limit` pending events in `trx` (see planFanOut): locks them (SKIP LOCKED on
 * PostgreSQL, so that two workers never take one event), reads the endpoints that may receive them,
 * inserts the bodies and deliveries and takes the events off the queue.
 */
export async function fanOutIn(
  trx: Kysely<Database>,
  dialect: DialectName,
  limit: number,
  now: number,
  slots: Slots | null,
  limits: FanOutLimits,
): Promise<FanOutResult> {
  const locked = await lockPendingEvents(trx, dialect, limit);
  if (locked.length === 0) return { events: 0, launches: [], unlisted: 0, leftDue: false };
  const clientIds = [...new Set(locked.flatMap((e) => (e.client_id === null ? [] : [e.client_id])))];
  const allClients = locked.some((e) => e.client_id === null);
  const latest = Math.max(...locked.map((e) => e.created_at));
  const endpoints = await subscribableEndpoints(trx, clientIds, allClients, latest);
  const plan = planFanOut(locked, endpoints, now, slots, limits);
  await insertMessages(trx, plan.messages);
  await insertDeliveries(trx, plan.deliveries);
  await dequeueEvents(trx, plan.taken);
  return {
    events: plan.taken.length,
    launches: plan.launches,
    unlisted: limits.deferListing ? plan.deliveries.length : 0,
    leftDue: plan.leftDue,
  };
}

/**
 * Fans out new events into the free `slots`, in a few rounds. The first reads about as many events
 * as there are free slots. If it took all it read and slots are left (some events had no subscribed
 * endpoint, or one at its limit), the next reads as many as the slots left would take at the same
 * ratio (nextRoundLimit): a backlog stays in the event queue rather than becoming deliveries that
 * wait, and every event read is taken. `more`: the rounds ran out with slots and events left, so that
 * one transaction stays short; another turn should follow.
 */
export async function fanOutIntoSlots(
  trx: Kysely<Database>,
  dialect: DialectName,
  slots: Slots,
  now: number,
  dispatchBatch: number,
  limits: FanOutLimits,
): Promise<FanOutResult & { more: boolean }> {
  const out = { events: 0, launches: [] as Launch[], unlisted: 0, leftDue: false, more: false };
  let limit = Math.min(dispatchBatch, Math.max(slots.free, REFILL_SLOTS));
  for (let round = 0; slots.free > 0; round++) {
    if (round === FAN_OUT_ROUNDS) {
      out.more = true;
      break;
    }
    const before = slots.free;
    const fanned = await fanOutIn(trx, dialect, limit, now, slots, limits);
    out.events += fanned.events;
    out.unlisted += fanned.unlisted;
    out.leftDue ||= fanned.leftDue;
    out.launches.push(...fanned.launches);
    if (fanned.events < limit) break;
    limit = nextRoundLimit(dispatchBatch, REFILL_SLOTS, fanned.events, before - slots.free, slots.free);
  }
  return out;
}

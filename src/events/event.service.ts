import type { Kysely } from 'kysely';
import { isoMillis } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import { atCommit } from '../storage/at-commit.js';
import { insertEvent } from './event.repository.js';
import type { EventRow } from './event.table.js';
import type { EventEnvelope, EventType, NewEvent } from './event.types.js';
import type { EventId } from '../lib/ids.js';
import { eventOriginIn } from './origin.js';

/**
 * Records an event inside the caller's transaction, so that the event exists exactly when the change
 * it reports commits. Delivery reads it from the table afterwards; nothing is sent from here. The
 * API request running the transaction, if any (see origin.ts), is stored with it.
 */
export async function recordEvent<T>(trx: Kysely<Database>, event: NewEvent<T>): Promise<EventEnvelope<T>> {
  const { row, envelope } = eventRowOf(trx, event);
  await insertEvent(trx, row, event.fanOut ?? true);
  return envelope;
}

/** `recordEvent`, with the event's rows written together with the transaction's COMMIT (see atCommit). */
export function recordEventAtCommit<T>(trx: Kysely<Database>, event: NewEvent<T>): EventEnvelope<T> {
  const { row, envelope } = eventRowOf(trx, event);
  atCommit(trx, () => insertEvent(trx, row, event.fanOut ?? true));
  return envelope;
}

function eventRowOf<T>(trx: Kysely<Database>, event: NewEvent<T>): { row: EventRow; envelope: EventEnvelope<T> } {
  const id = newId('event', event.at.getTime());
  const origin = eventOriginIn(trx);
  const row = {
    id,
    client_id: event.clientId,
    type: event.type,
    livemode: event.livemode ? 1 : 0,
    created_at: event.at.getTime(),
    data: JSON.stringify(event.data),
    subject_ref: event.subjectRef ?? null,
    origin: origin === undefined ? null : JSON.stringify(origin),
  };
  return { row, envelope: { id, type: event.type, created_at: isoMillis(event.at), data: event.data, livemode: event.livemode } };
}

export function envelopeOf(row: EventRow): EventEnvelope {
  return {
    id: row.id as EventId,
    type: row.type as EventType,
    created_at: isoMillis(row.created_at),
    data: JSON.parse(row.data) as unknown,
    livemode: row.livemode === 1,
  };
}

export interface EventTable {
  id: string;
  /** The client whose resource the event reports; null for events every client receives. */
  client_id: string | null;
  type: string;
  livemode: number;
  created_at: number;
  /** The envelope's `data`, as JSON text. */
  data: string;
  /** The resource the event is about (an order, attestation or endpoint id); kept in the row, not indexed. */
  subject_ref: string | null;
  /**
   * The API request that caused the event (src/events/origin.ts), as JSON; null when none did.
   * Optional in rows made before it existed.
   */
  origin?: string | null;
}

/** An event waiting to be fanned out to webhook endpoints: queued when it is recorded, taken off by the fan-out. */
export interface EventQueueTable {
  event_id: string;
}

export type EventRow = EventTable;

export interface EventTable {
  id: string;
  /** The client whose resource the event reports; null for events every client receives. */
  client_id: string | null;
  type: string;
  livemode: number;
  created_at: number;
  /** The envelope's `data`, as JSON text. */
  data: string;
  /** The resource the event is about (an order or attestation id), to list an object's history. */
  subject_ref: string | null;
  /** When the delivery worker fanned the event out to endpoints; null while pending. */
  dispatched_at: number | null;
}

export type EventRow = EventTable;

/**
 * A subject's book at one partner: the statement its positions start from, and the row that every
 * change to those positions locks first (a fill, a statement, the holdings check of a sell), so that
 * they happen one at a time for that subject and partner.
 */
export interface PositionBookTable {
  client_id: string;
  subject_id: string;
  rcpt_to: string;
  /** The latest statement (`stm_...`), or null while the positions come from fills alone. */
  statement_id: string | null;
  /** Its as-of date, YYYY-MM-DD. */
  statement_as_of: string | null;
  created_at: number;
  updated_at: number;
}

/** One position: a subject's holding of one instrument at one partner, kept up to date as fills arrive. */
export interface PositionTable {
  client_id: string;
  subject_id: string;
  rcpt_to: string;
  instrument: string;
  /** Signed quantity. */
  qty: number;
  /** The signed cost of `qty`, decimal text (it can exceed 2^63). */
  cost_cents: string;
  /** Realised profit or loss since the position's start, decimal text. */
  realised_pnl_cents: string;
  /** JSON of core/settlement.ts's UnsettledEntry[]: the recent fills, to tell what has settled. */
  unsettled: string;
  /** The as-of date of the statement the position starts from (its book's), or null. */
  statement_as_of: string | null;
  updated_at: number;
}

/** A statement of the subject's holdings at a partner, as the client declared it. */
export interface PositionStatementTable {
  /** `stm_...` */
  id: string;
  client_id: string;
  subject_id: string;
  rcpt_to: string;
  as_of: string;
  /** JSON: `[{ instrument, qty, average_cost_cents }]`, as declared. */
  holdings: string;
  /** The statement it was compared with (the latest one dated before it), or null. */
  previous_statement_id: string | null;
  /** The statement of the same date it replaced (a correction), or null. */
  replaces: string | null;
  /** The statement of the same date that corrected this one, or null. */
  replaced_by: string | null;
  created_at: number;
}

/** One instrument where a statement disagreed with the service's records. */
export interface PositionBreakTable {
  statement_id: string;
  instrument: string;
  client_id: string;
  subject_id: string;
  rcpt_to: string;
  statement_qty: number;
  expected_qty: number;
  difference_qty: number;
}

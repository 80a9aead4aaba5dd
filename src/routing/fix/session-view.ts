import type { Kysely } from 'kysely';
import { isoMillis } from '../../lib/clock.js';
import type { Database } from '../../storage/schema.js';
import type { FixSessionState } from './fix.table.js';

/**
 * One partner's FIX session as operators see it (`cauri partners sessions`, `GET /v1/operator/fix-sessions`,
 * the dashboard's Sessions page): the state, the CompIDs, the next sequence number each way, the
 * last logon and message times, the process holding the session and the last error.
 */
export interface FixSessionView {
  partner_id: string;
  partner_name: string | null;
  state: FixSessionState;
  sender_comp_id: string;
  target_comp_id: string;
  /** MsgSeqNum of the next message cauri sends. */
  next_sender_seq: number;
  /** MsgSeqNum cauri expects next from the SGI. */
  next_target_seq: number;
  last_logon_at: string | null;
  last_sent_at: string | null;
  last_received_at: string | null;
  /** The process holding the session's lease now, or null when none does. */
  held_by: string | null;
  last_error: string | null;
}

const at = (ms: number | null) => (ms === null ? null : isoMillis(ms));

/** Every FIX session, by partner id, as of `now` (which decides whether a lease still holds). */
export async function sessionViews(db: Kysely<Database>, now: number): Promise<FixSessionView[]> {
  const rows = await db
    .selectFrom('fix_sessions')
    .leftJoin('partners', 'partners.id', 'fix_sessions.partner_id')
    .selectAll('fix_sessions')
    .select('partners.name as partner_name')
    .orderBy('fix_sessions.partner_id')
    .execute();
  return rows.map((s) => ({
    partner_id: s.partner_id,
    partner_name: s.partner_name ?? null,
    state: s.state,
    sender_comp_id: s.sender_comp_id,
    target_comp_id: s.target_comp_id,
    next_sender_seq: Number(s.next_sender_seq),
    next_target_seq: Number(s.next_target_seq),
    last_logon_at: at(s.last_logon_at === null ? null : Number(s.last_logon_at)),
    last_sent_at: at(s.last_sent_at === null ? null : Number(s.last_sent_at)),
    last_received_at: at(s.last_received_at === null ? null : Number(s.last_received_at)),
    held_by: Number(s.lease_until) > now ? s.lease_owner : null,
    last_error: s.last_error,
  }));
}

/** Where a partner's FIX session stands; sequence numbers are committed here (see fix-session.ts). */
export type FixSessionState = 'disconnected' | 'connecting' | 'logged_on' | 'outside_window';

export interface FixSessionTable {
  partner_id: string;
  begin_string: string;
  sender_comp_id: string;
  target_comp_id: string;
  /** The MsgSeqNum the next message sent will carry. */
  next_sender_seq: number;
  /** The lowest MsgSeqNum from the partner not yet applied: every lower one was (or was a gap fill). */
  next_target_seq: number;
  /** The daily session window this session's sequence numbers belong to (its opening, ISO 8601), or null. */
  period: string | null;
  /** The position of the last report in the partner's report log. */
  report_pos: number;
  state: FixSessionState;
  last_sent_at: number | null;
  last_received_at: number | null;
  last_logon_at: number | null;
  last_error: string | null;
  /** The process holding the session, until `lease_until` (epoch ms): one at a time. */
  lease_owner: string | null;
  lease_until: number;
  updated_at: number;
}

/** An application message sent, kept to be sent again (PossDup) when the partner asks for it. */
export interface FixMessageTable {
  partner_id: string;
  seq: number;
  msg_type: string;
  cl_ord_id: string | null;
  /** SendingTime (52) of the first transmission, epoch ms: OrigSendingTime (122) of a resend. */
  sending_time: number;
  /** The message's body fields as jspurefix encodes them (JSON). */
  body: string;
}

/** What the partner has said of an order handed to it, as far as the report log goes. */
export type FixOrderState = 'sent' | 'accepted' | 'filled' | 'cancelled' | 'rejected';

export interface FixOrderTable {
  partner_id: string;
  order_id: string;
  side: 'buy' | 'sell';
  qty: number;
  instrument: string;
  /**
   * The order's terms at the partner as a message body (JSON): the NewOrderSingle's, with ClOrdID,
   * quantity and price as the last Replaced left them. A cancel or an amend repeats it.
   */
  body: string;
  state: FixOrderState;
  cum_qty: number;
  /** The `seq` of the order's last report in the log (0: none yet). */
  report_seq: number;
  /** OrderID (37) as the partner named the order, once it did. */
  partner_order_id: string | null;
  created_at: number;
  updated_at: number;
}

export type FixRequestKind = 'new' | 'cancel' | 'amend';
export type FixRequestState = 'pending' | 'answered' | 'refused';

/**
 * A ClOrdID (11) sent: a new order (ClOrdID = the order id), or a cancel or an amend of it (ClOrdID =
 * the service's request id, so that a repeated request is recognised).
 */
export interface FixRequestTable {
  partner_id: string;
  cl_ord_id: string;
  order_id: string;
  kind: FixRequestKind;
  /** The MsgSeqNum the request went out under: rejects name it in RefSeqNum (45). */
  seq: number;
  state: FixRequestState;
  /** What a cancel or an amend asked (RequestTerms, JSON); null for a new order. */
  terms: string | null;
  created_at: number;
}

/** The partner's report log, read by the router through `reports(since)`. */
export interface FixReportTable {
  partner_id: string;
  /** Position in the partner's log: 1, 2, 3, ... */
  pos: number;
  order_id: string;
  seq: number;
  type: string;
  /** The ExecutionReport of connector.ts, as JSON. */
  report: string;
}

/** ExecIDs (17) already applied, per order: a second copy (a resend) changes nothing. */
export interface FixExecIdTable {
  partner_id: string;
  order_id: string;
  exec_id: string;
  applied_at: number;
}

export type FixSessionRow = FixSessionTable;
export type FixOrderRow = FixOrderTable;
export type FixRequestRow = FixRequestTable;
export type FixMessageRow = FixMessageTable;

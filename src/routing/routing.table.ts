/** Where a router has read a connector's report log to, and which process reads it now. */
export interface ConnectorPositionTable {
  connector: string;
  position: string | null;
  lease_owner: string | null;
  lease_until: number;
}

/**
 * The calls made to sandbox partners and when: the simulated SGI is a pure function of them, so any
 * process (and a restarted one) rebuilds the same partner state from this journal.
 */
export interface SandboxJournalTable {
  id: string;
  connector: string;
  kind: 'submit' | 'cancel' | 'amend';
  order_id: string;
  /** The call's argument as JSON: the order, the cancel request or the amend request (null in old cancels). */
  payload: string | null;
  at: number;
}

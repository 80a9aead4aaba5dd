/**
 * Breaks between a statement and the service's records (pure; docs/positions.md, "Statements and
 * breaks"). What the service expects the statement to hold on its date, per instrument, is the
 * previous statement's holdings plus the fills that settled after the previous statement's date and
 * on or before this one's (before the first statement: every fill settled by its date). An
 * instrument where the statement's quantity differs from that is a break.
 */
export interface PositionBreak {
  readonly instrument: string;
  /** What the statement declares (0 for an instrument it does not list). */
  readonly statement_qty: number;
  /** What the service's records give for the statement's date. */
  readonly expected_qty: number;
  /** `statement_qty - expected_qty`. */
  readonly difference_qty: number;
}

/** The breaks, by instrument code; none when every instrument agrees. */
export function breaksOf(statement: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>): PositionBreak[] {
  const instruments = [...new Set([...statement.keys(), ...expected.keys()])].sort();
  const out: PositionBreak[] = [];
  for (const instrument of instruments) {
    const declared = statement.get(instrument) ?? 0;
    const ours = expected.get(instrument) ?? 0;
    if (declared !== ours) out.push({ instrument, statement_qty: declared, expected_qty: ours, difference_qty: declared - ours });
  }
  return out;
}

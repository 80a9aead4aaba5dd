/**
 * What a SequenceReset (35=4) from the partner may do to the number cauri expects next, as FIX 4.4
 * has it (QuickFIX acts the same), as a pure function. jspurefix takes every SequenceReset's NewSeqNo
 * (36) as the next number, backwards included, and checks no gap before a gap fill.
 *
 * - Reset mode (GapFillFlag 123 absent or N): NewSeqNo may move the number forward only. One below
 *   the number expected is refused with a Reject (SessionRejectReason 373 = 5, RefTagID 371 = 36) and
 *   changes nothing: the partner's later messages would otherwise be taken again under numbers
 *   already dealt with, and the ones already received asked for again.
 * - GapFill mode (123=Y): it stands for the partner's messages from its MsgSeqNum (34) to NewSeqNo - 1,
 *   so NewSeqNo must be above its MsgSeqNum, else the same Reject. A gap fill numbered beyond the
 *   messages received shows a gap before it: those messages are asked for at once (ResendRequest),
 *   as for any message beyond a gap. A copy of a gap fill already dealt with never moves the number
 *   back.
 */
export type SequenceResetAction =
  | { readonly kind: 'refuse'; readonly text: string }
  | { readonly kind: 'follow'; readonly askFor: { readonly begin: number; readonly end: number } | null };

export interface SequenceResetFields {
  /** MsgSeqNum (34). */
  readonly seq: number;
  /** NewSeqNo (36). */
  readonly newSeqNo: number;
  /** GapFillFlag (123) = Y. */
  readonly gapFill: boolean;
}

/** `expected`: the number after the highest received from the partner so far. */
export function sequenceReset(message: SequenceResetFields, expected: number): SequenceResetAction {
  const { seq, newSeqNo, gapFill } = message;
  if (!Number.isSafeInteger(newSeqNo) || newSeqNo < 1)
    return { kind: 'refuse', text: `NewSeqNo (36) ${newSeqNo} is not a sequence number` };
  if (gapFill) {
    if (newSeqNo <= seq) return { kind: 'refuse', text: `NewSeqNo (36) ${newSeqNo} of a gap fill must be above its MsgSeqNum ${seq}` };
    return { kind: 'follow', askFor: seq > expected ? { begin: expected, end: seq - 1 } : null };
  }
  if (newSeqNo < expected)
    return {
      kind: 'refuse',
      text: `NewSeqNo (36) ${newSeqNo} is below the ${expected} expected: a SequenceReset cannot lower the sequence`,
    };
  return { kind: 'follow', askFor: null };
}

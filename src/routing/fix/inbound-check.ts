import { EXEC_TYPES } from './mapping.js';
import { parseQty, priceToCents } from './prices.js';

/**
 * The checks on a partner's message before it reaches the connector, as pure functions over its
 * fields (jspurefix runs none of them for an initiator).
 *
 * - Garbled: the CheckSum (10) does not match, or MsgSeqNum (34) is not a number. FIX says to ignore
 *   such a message without taking its number: the next message shows a gap and the partner sends it
 *   again.
 * - Refused (a session-level Reject, 35=3): the message arrived intact but cannot be applied: its
 *   MsgType is not FIX 4.4's, or an ExecutionReport lacks what the connector reads (ExecID 17,
 *   ExecType 150, and for a Trade LastQty 32 and LastPx 31) or carries it in a form FIX does not
 *   allow, or a Trade that cannot be a fill: a LastQty that is not a positive whole number, a LastPx
 *   that is not positive once in cents (under half a cent rounds to 0). Fields the connector does
 *   not read are not checked: a gateway's own fields pass.
 */

/**
 * Why a partner's message was not applied, as counted for operators: `garbled` (ignored, asked for
 * again), `session_reject` (refused with a Reject), `unknown_order` (a report for an order this
 * service did not send).
 */
export type RefusedReason = 'garbled' | 'session_reject' | 'unknown_order';

/** SessionRejectReason (373) values used here. */
export const SESSION_REJECT_REASON = {
  requiredTagMissing: 1,
  valueIncorrect: 5,
  incorrectDataFormat: 6,
  compIdProblem: 9,
  invalidMsgType: 11,
} as const;

export interface SessionRejection {
  /** SessionRejectReason (373). */
  readonly reason: number;
  /** RefTagID (371): the field at fault, when one is. */
  readonly tag: number | null;
  /** Text (58). */
  readonly text: string;
}

/** A field's value as received; null when absent or empty. */
export type FieldReader = (tag: number) => string | null;

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const UTC_TIMESTAMP = /^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])-([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?$/;

/** Why a message must be ignored as garbled, or null when it is intact. */
export function garbled(field: FieldReader, computedChecksum: number): string | null {
  const seq = field(34);
  if (seq === null || !/^\d{1,10}$/.test(seq)) return `MsgSeqNum (34) ${seq === null ? 'missing' : `'${seq}'`}`;
  const checksum = field(10);
  if (checksum === null || !/^\d{3}$/.test(checksum) || Number(checksum) !== computedChecksum)
    return `CheckSum (10) ${checksum ?? 'missing'}, computed ${String(computedChecksum).padStart(3, '0')}`;
  return null;
}

/**
 * A message that is not of this session: FIX ends the session on it, with a Logout whose Text says
 * why (QuickFIX's words), after a Reject (SessionRejectReason 9) when the CompIDs are wrong; nothing of
 * the message is taken. Null when the header is this session's.
 */
export function foreignHeader(
  field: FieldReader,
  session: { readonly beginString: string; readonly senderCompId: string; readonly targetCompId: string },
): { readonly reject: SessionRejection | null; readonly logout: string } | null {
  const beginString = field(8);
  if (beginString !== session.beginString) return { reject: null, logout: `Incorrect BeginString ${beginString ?? ''}`.trimEnd() };
  const sender = field(49);
  const target = field(56);
  for (const [tag, name, got, want] of [
    [49, 'SenderCompID', sender, session.targetCompId],
    [56, 'TargetCompID', target, session.senderCompId],
  ] as const) {
    if (got !== want)
      return {
        reject: { reason: SESSION_REJECT_REASON.compIdProblem, tag, text: `${name} (${tag}) '${got ?? ''}' is not ${want}` },
        logout: 'CompID problem',
      };
  }
  return null;
}

/** Why an application message is refused at the session level, or null when the connector can read it. */
export function checkApplicationMessage(
  msgType: string,
  field: FieldReader,
  isFix44Type: (msgType: string) => boolean,
): SessionRejection | null {
  if (!isFix44Type(msgType))
    return { reason: SESSION_REJECT_REASON.invalidMsgType, tag: null, text: `MsgType ${msgType} is not a FIX 4.4 message` };
  if (msgType !== '8') return null;
  const missing = (tag: number, name: string): SessionRejection | null =>
    field(tag) === null ? { reason: SESSION_REJECT_REASON.requiredTagMissing, tag, text: `${name} (${tag}) is required` } : null;
  const format = (tag: number, name: string, pattern: RegExp): SessionRejection | null => {
    const value = field(tag);
    return value !== null && !pattern.test(value)
      ? { reason: SESSION_REJECT_REASON.incorrectDataFormat, tag, text: `${name} (${tag}) '${value}' is not in FIX format` }
      : null;
  };
  const execType = field(150);
  return (
    missing(17, 'ExecID') ??
    missing(150, 'ExecType') ??
    (execType !== null && !Object.hasOwn(EXEC_TYPES, execType)
      ? { reason: SESSION_REJECT_REASON.valueIncorrect, tag: 150, text: `ExecType (150) '${execType}' is not a FIX 4.4 value` }
      : null) ??
    (execType === 'F' ? (missing(32, 'LastQty') ?? missing(31, 'LastPx')) : null) ??
    format(32, 'LastQty', DECIMAL) ??
    format(31, 'LastPx', DECIMAL) ??
    format(38, 'OrderQty', DECIMAL) ??
    format(44, 'Price', DECIMAL) ??
    format(60, 'TransactTime', UTC_TIMESTAMP) ??
    (execType === 'F' ? tradeValues(field) : null)
  );
}

/**
 * A Trade's LastQty and LastPx as a fill: a whole number of shares above 0, and a price of at least
 * 1 cent once rounded half up. Applied as is, a price under half a cent would make a fill at 0 cents,
 * which the order refuses while the connector counts it as executed.
 */
function tradeValues(field: FieldReader): SessionRejection | null {
  const lastQty = field(32) ?? '';
  const qty = parseQty(lastQty);
  if (qty === null || qty < 1)
    return { reason: SESSION_REJECT_REASON.valueIncorrect, tag: 32, text: `LastQty (32) '${lastQty}' is not a positive whole number` };
  const lastPx = field(31) ?? '';
  const price = priceToCents(lastPx);
  if (price === null || price.cents < 1)
    return {
      reason: SESSION_REJECT_REASON.valueIncorrect,
      tag: 31,
      text: `LastPx (31) '${lastPx}' is not a positive price in cents (under half a cent rounds to 0)`,
    };
  return null;
}

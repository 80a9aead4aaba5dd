import { MsgTag, MsgType, type MsgView } from './api.js';
import type { PartnerMessage } from '../partner-message.js';

function text(view: MsgView, tag: MsgTag): string | null {
  const value = view.getString(tag);
  return value === null || value === undefined || value === '' ? null : value;
}

function integer(view: MsgView, tag: MsgTag): number | null {
  const value = text(view, tag);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

function time(view: MsgView, tag: MsgTag): number | null {
  const value = view.getTyped(tag);
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.getTime() : null;
}

/**
 * Reads what the connector needs from a received message. Runs inside jspurefix's event: the view's
 * buffers are reused once it returns, so everything is copied out here.
 */
export function readPartnerMessage(msgType: string, view: MsgView, receivedAt: number): PartnerMessage {
  switch (msgType) {
    case MsgType.ExecutionReport:
      return {
        kind: 'execution_report',
        clOrdId: text(view, MsgTag.ClOrdID),
        origClOrdId: text(view, MsgTag.OrigClOrdID),
        report: {
          execId: text(view, MsgTag.ExecID) ?? '',
          execType: text(view, MsgTag.ExecType) ?? '',
          partnerOrderId: text(view, MsgTag.OrderID),
          lastQty: text(view, MsgTag.LastQty),
          lastPx: text(view, MsgTag.LastPx),
          orderQty: text(view, MsgTag.OrderQty),
          price: text(view, MsgTag.Price),
          ordRejReason: integer(view, MsgTag.OrdRejReason),
          text: text(view, MsgTag.Text),
          at: time(view, MsgTag.TransactTime) ?? time(view, MsgTag.SendingTime) ?? receivedAt,
        },
      };
    case MsgType.OrderCancelReject:
      return {
        kind: 'cancel_reject',
        clOrdId: text(view, MsgTag.ClOrdID),
        origClOrdId: text(view, MsgTag.OrigClOrdID),
        cxlRejReason: integer(view, MsgTag.CxlRejReason),
        cxlRejResponseTo: text(view, MsgTag.CxlRejResponseTo),
        text: text(view, MsgTag.Text),
      };
    case MsgType.Reject:
    case MsgType.BusinessMessageReject:
      return {
        kind: 'reject',
        level: msgType === MsgType.Reject ? 'session' : 'business',
        refSeqNum: integer(view, MsgTag.RefSeqNum),
        refMsgType: text(view, MsgTag.RefMsgType),
        refId: text(view, MsgTag.BusinessRejectRefID),
        text: text(view, MsgTag.Text),
      };
    default:
      return { kind: 'other', msgType };
  }
}

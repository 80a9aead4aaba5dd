import type { ExecReportFields } from './mapping.js';

/**
 * The partner's messages the connector acts on, as plain values read off jspurefix's view of them
 * (numbers and prices stay text until the mapping parses them exactly).
 */
export type PartnerMessage =
  | {
      readonly kind: 'execution_report';
      readonly clOrdId: string | null;
      readonly origClOrdId: string | null;
      readonly report: ExecReportFields;
    }
  | {
      readonly kind: 'cancel_reject';
      readonly clOrdId: string | null;
      readonly origClOrdId: string | null;
      readonly cxlRejReason: number | null;
      readonly cxlRejResponseTo: string | null;
      readonly text: string | null;
    }
  /** Reject (35=3, session level) or BusinessMessageReject (35=j): names the refused message. */
  | {
      readonly kind: 'reject';
      readonly level: 'session' | 'business';
      readonly refSeqNum: number | null;
      readonly refMsgType: string | null;
      readonly refId: string | null;
      readonly text: string | null;
    }
  | { readonly kind: 'other'; readonly msgType: string };

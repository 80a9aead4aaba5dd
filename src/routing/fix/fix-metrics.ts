import { Counter, type Registry } from 'prom-client';

/** What one partner's session reports as it runs (DurableFixSession and FixSessionRunner call it). */
export interface SessionCounters {
  /** A FIX message decoded from the partner (`received`) or encoded and written to it (`sent`), resends included. */
  message(direction: 'sent' | 'received', msgType: string): void;
  /** A ResendRequest (35=2): from the partner, which cauri answers from its store, or from cauri, for a gap it found. */
  resendRequest(from: 'partner' | 'cauri'): void;
  /** A message sent again in answer to the partner's ResendRequest: an application message (PossDup) or a gap fill. */
  resent(kind: 'application' | 'gap_fill'): void;
  /** A refusal: Reject (35=3) `session`, BusinessMessageReject (35=j) `business`, OrderCancelReject (35=9) `cancel`, ExecutionReport Rejected (150=8) `order`. */
  reject(direction: 'sent' | 'received', kind: 'session' | 'business' | 'cancel' | 'order'): void;
  /** The partner answered cauri's Logon: the session is up. */
  loggedOn(): void;
}

/**
 * The FIX sessions' counters, per partner, in prom-client. They are made here, where the sessions
 * count, and registered on the service's registry by the composition root (`register`); a process
 * that runs no session exports them without series.
 */
export class FixMetrics {
  readonly #messages = new Counter({
    name: 'cauri_fix_messages_total',
    help: 'FIX messages of the partner sessions this process keeps up, by partner, direction (sent, received) and MsgType (35); resends and session messages included.',
    labelNames: ['partner', 'direction', 'msg_type'],
    registers: [],
  });

  readonly #resendRequests = new Counter({
    name: 'cauri_fix_resend_requests_total',
    help: 'ResendRequests (35=2) by partner and by who asked: from="partner" (answered from the stored messages), from="cauri" (a gap in what the partner sent).',
    labelNames: ['partner', 'from'],
    registers: [],
  });

  readonly #resent = new Counter({
    name: 'cauri_fix_resent_messages_total',
    help: "Messages sent again in answer to a partner's ResendRequest, by partner and kind: application (an order, a cancel or an amend, with PossDupFlag=Y) or gap_fill (a SequenceReset-GapFill over session messages).",
    labelNames: ['partner', 'kind'],
    registers: [],
  });

  readonly #rejects = new Counter({
    name: 'cauri_fix_rejects_total',
    help: 'Refusals by partner, direction and kind: session (Reject 35=3), business (BusinessMessageReject 35=j), cancel (OrderCancelReject 35=9, a cancel or an amend refused), order (ExecutionReport ExecType 8, an order refused).',
    labelNames: ['partner', 'direction', 'kind'],
    registers: [],
  });

  readonly #logons = new Counter({
    name: 'cauri_fix_logons_total',
    help: "Times a partner's session came up in this process (the partner answered the Logon). A steady rise: the session keeps dropping.",
    labelNames: ['partner'],
    registers: [],
  });

  /** Adds the counters to the registry that /metrics exports. */
  register(registry: Registry): void {
    for (const metric of [this.#messages, this.#resendRequests, this.#resent, this.#rejects, this.#logons]) registry.registerMetric(metric);
  }

  /** The counters of one partner's session (labelled series made once each and reused). */
  forPartner(partner: string): SessionCounters {
    const series = new Map<string, { inc(): void }>();
    const child = (key: string, make: () => { inc(): void }) => {
      let found = series.get(key);
      if (found === undefined) {
        found = make();
        series.set(key, found);
      }
      found.inc();
    };
    return {
      message: (direction, msgType) =>
        child(`m|${direction}|${msgType}`, () => this.#messages.labels({ partner, direction, msg_type: msgType })),
      resendRequest: (from) => child(`q|${from}`, () => this.#resendRequests.labels({ partner, from })),
      resent: (kind) => child(`r|${kind}`, () => this.#resent.labels({ partner, kind })),
      reject: (direction, kind) => child(`x|${direction}|${kind}`, () => this.#rejects.labels({ partner, direction, kind })),
      loggedOn: () => child('l', () => this.#logons.labels({ partner })),
    };
  }
}

/** Counters that count nothing, for sessions run without metrics. */
export const NO_COUNTERS: SessionCounters = {
  message: () => undefined,
  resendRequest: () => undefined,
  resent: () => undefined,
  reject: () => undefined,
  loggedOn: () => undefined,
};

/** An ExecutionReport whose ExecType (150) is Rejected, in a message as logged (SOH or `|` between fields). */
const REJECTED_REPORT = /(?:^|[|\x01])150=8(?:[|\x01]|$)/;

/**
 * Counts a message the partner sent (`received`, as decoded) or cauri sent (`sent`, as encoded): by
 * MsgType, then ResendRequests by who asked and refusals by kind (an order refused is counted from
 * the partner's side only, as cauri refuses none).
 */
export function countMessage(counters: SessionCounters, direction: 'sent' | 'received', msgType: string, text: string): void {
  counters.message(direction, msgType);
  if (msgType === '2') counters.resendRequest(direction === 'received' ? 'partner' : 'cauri');
  else if (msgType === '3') counters.reject(direction, 'session');
  else if (msgType === 'j') counters.reject(direction, 'business');
  else if (direction === 'received' && msgType === '9') counters.reject(direction, 'cancel');
  else if (direction === 'received' && msgType === '8' && REJECTED_REPORT.test(text)) counters.reject(direction, 'order');
}

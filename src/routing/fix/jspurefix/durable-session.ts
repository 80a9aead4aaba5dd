import type { Kysely } from 'kysely';
import {
  AsciiSession,
  MsgTag,
  MsgType,
  SessionId,
  SessionState,
  type IJsFixConfig,
  type ILooseObject,
  type MsgView,
  type SendCallback,
} from './api.js';
import type { Database } from '../../../storage/schema.js';
import { messagesBetween, resetSequences } from '../fix.repository.js';
import {
  checkApplicationMessage,
  foreignHeader,
  garbled,
  SESSION_REJECT_REASON,
  type RefusedReason,
  type SessionRejection,
} from '../inbound-check.js';
import { countMessage, NO_COUNTERS, type SessionCounters } from '../fix-metrics.js';
import type { FixBody } from '../mapping.js';
import type { PartnerMessage } from '../partner-message.js';
import { BEGIN_STRING } from '../../../partners/fix-settings.js';
import { InboundQueue, type Received } from './inbound-queue.js';
import { logMessage } from './library.js';
import { OutboundQueue, type RecordSend, type SessionStorage, type Transmitter } from './outbound-queue.js';
import { readPartnerMessage } from './read-message.js';
import { sequenceReset } from '../sequence-reset.js';
import { DatabaseSessionStore } from './session-store.js';
import { BUSY_STATES, SESSION_TYPES } from './session-types.js';

export type { RecordSend } from './outbound-queue.js';

export interface DurableSessionHooks {
  /** Applies a partner's message in `trx` (which also commits the partner's sequence number); returns what to do once committed. */
  applyInbound(trx: Kysely<Database>, message: PartnerMessage): Promise<(() => void) | undefined>;
  onLoggedOn(): void;
  onStopped(error: Error | undefined): void;
  /** A partner's message was ignored as garbled, or refused with a session-level Reject. */
  onRefused(reason: Exclude<RefusedReason, 'unknown_order'>): void;
}

export interface DurableSessionDeps extends SessionStorage {
  /** The sequence numbers committed in fix_sessions when the connection opened. */
  readonly committed: { readonly nextSenderSeq: number; readonly nextTargetSeq: number };
  readonly hooks: DurableSessionHooks;
  /** The partner's counters on /metrics. */
  readonly counters?: SessionCounters;
  /**
   * How long a gap before held messages may stay open before cauri asks for it again (a
   * ResendRequest); after GAP_REQUESTS such requests unanswered the connection is dropped.
   */
  readonly gapTimeoutMs: number;
}

/** ResendRequests cauri sends again for one gap before it drops the connection (the next logon asks again). */
export const GAP_REQUESTS = 3;

/**
 * jspurefix's ASCII session (encoding, decoding, logon, heartbeats, gap detection) made durable on the
 * service's database, and guarded against jspurefix's known faults:
 *
 * - Every message goes out through one queue (outbound-queue.ts). Its sequence number is committed
 *   (with, for an application message, the message itself and the caller's record of the hand-over)
 *   in one transaction before jspurefix encodes it and its bytes leave; application messages queued
 *   together share that transaction. A message recorded but never delivered (the connection fell)
 *   is sent again when the partner asks for it.
 * - ResendRequests are answered from that store: each application message again with PossDupFlag
 *   (43=Y) and its first SendingTime as OrigSendingTime (122), session messages as
 *   SequenceReset-GapFill. jspurefix's own answer gap-fills everything.
 * - The partner's sequence number is committed in the transaction that applies the partner's message,
 *   and never past a gap (InboundSequence); jspurefix writes it before the application has the message.
 * - Messages are applied one after another, in sequence order (those received together in one
 *   transaction; inbound-queue.ts): one that arrives beyond a gap is held until the gap is filled,
 *   and the gap asked for again when the partner leaves it open (#watchGap). A copy of one already
 *   applied (same ExecID) is recognised by the application.
 * - Each of the partner's messages is checked first (inbound-check.ts): a garbled one is ignored
 *   without taking its number (the partner sends it again), an application message the connector
 *   cannot read is answered with a Reject (35=3) and its number taken; neither reaches the
 *   application. jspurefix checks none of this for an initiator.
 * - Why the partner ended the session (its Logout's text, its numbers gone back) is kept for the
 *   operator (endReason).
 * - jspurefix errors end the session (the runner reconnects) and never the process.
 */
export class DurableFixSession extends AsciiSession {
  readonly #deps: DurableSessionDeps;
  readonly #outbound: OutboundQueue;
  readonly #inbound: InboundQueue;
  #captured: PartnerMessage | null = null;
  /** Why the application message being dispatched is refused (null: it is not). */
  #refusal: SessionRejection | null = null;
  /** Set when the application message being dispatched was refused with a Reject. */
  #rejected = false;
  #loggedOn = false;
  /** This side asked to log out. */
  #loggingOut = false;
  /** Why the partner ended the session, as an operator needs to read it (its Logout's text, numbers gone back). */
  #endReason: string | null = null;
  readonly #counters: SessionCounters;
  /** The gap before held messages being watched: since when, and how many times cauri asked again. */
  #gap: { begin: number; since: number; asked: number } | null = null;

  constructor(config: IJsFixConfig, deps: DurableSessionDeps) {
    const store = new DatabaseSessionStore(
      new SessionId(BEGIN_STRING, config.description.SenderCompId, config.description.TargetCompID),
      deps.committed,
      {
        messages: (from, to) => messagesBetween(deps.db, deps.partnerId, from, to),
        reset: () => deps.transact((trx) => resetSequences(trx, deps.partnerId, deps.clock.now().getTime())),
      },
    );
    config.sessionStoreFactory = { create: () => store };
    super(config);
    this.#deps = deps;
    this.#counters = deps.counters ?? NO_COUNTERS;
    this.#outbound = new OutboundQueue(deps, this.#counters, {
      transmitter: () => (this.transport?.transmitter as unknown as Transmitter | undefined) ?? null,
      stopped: () => this.getState() === SessionState.Stopped,
      encode: (msgType, body, done) => super.send(msgType, body, done),
      fail: (error) => this.#fail(error),
    });
    this.#inbound = new InboundQueue(
      deps,
      deps.committed.nextTargetSeq,
      (trx, message) => deps.hooks.applyInbound(trx, message),
      (error) => this.#fail(error),
    );
    // jspurefix emits 'error' when a session ends in failure; unheard, EventEmitter would throw it.
    this.on('error', () => undefined);
    // jspurefix's heartbeat timer calls tick(); an exception there would be uncaught.
    const self = this as unknown as { tick: () => void };
    const tick = self.tick.bind(this);
    self.tick = () => {
      try {
        tick();
        this.#watchGap();
      } catch (error) {
        this.#fail(error);
      }
    };
  }

  /** True between the partner's Logon and the end of the session. */
  get loggedOn(): boolean {
    return this.#loggedOn && this.getState() !== SessionState.Stopped;
  }

  /**
   * Sends an application message: resolves with its sequence number once it is committed as sent
   * (with `record`'s writes), rejects when nothing was recorded (then nothing was sent either).
   */
  sendApplication(msgType: string, body: FixBody, clOrdId: string | null, record: RecordSend): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const settle = (error: Error | null, seq: number) => (error === null ? resolve(seq) : reject(error));
      this.#outbound.enqueue({ kind: 'send', msgType, body: { ...body }, callback: null, app: { clOrdId, body, record, settle } });
    });
  }

  /**
   * Why the partner ended the session, when it did: the Text (58) of a Logout this side did not ask
   * for (a refused Logon says why there), or its MsgSeqNum gone below the one expected.
   */
  get endReason(): string | null {
    return this.#endReason;
  }

  /** Asks the partner to log out (the session ends when it confirms). */
  logout(): void {
    this.#loggingOut = true;
    this.done();
  }

  /** Ends the connection at once, without a Logout. */
  drop(reason: string): void {
    this.#fail(new Error(reason));
  }

  /** Resolves once every message received has been applied and every queued one sent or failed. */
  async settled(): Promise<void> {
    await this.#inbound.settled();
    await this.#outbound.settled();
  }

  // --- Outbound: one queue, committed before the bytes leave ---

  protected override send(msgType: string, obj: ILooseObject, callback: SendCallback | null = null): void {
    this.#outbound.enqueue({ kind: 'send', msgType, body: obj, callback });
  }

  protected override onResendRequest(view: MsgView): void {
    const begin = Number(view.getTyped(MsgTag.BeginSeqNo));
    const end = Number(view.getTyped(MsgTag.EndSeqNo));
    this.#outbound.enqueue({ kind: 'resend', begin, end });
  }

  // --- Inbound: applied in order, the partner's sequence number committed with the effects ---

  protected override onMsg(msgType: string, view: MsgView): void {
    const field = (tag: number) => {
      const value = view.getString(tag);
      return value === null || value === undefined || value === '' ? null : value;
    };
    let computed = -1;
    try {
      computed = view.checksum();
    } catch {
      // No CheckSum to compare: garbled.
    }
    const damage = garbled(field, computed);
    if (damage !== null) {
      // Not even its number can be trusted: jspurefix never sees it, so the next message shows a
      // gap and the partner sends this one again.
      this.#deps.log.warn({ partner_id: this.#deps.partnerId, msg_type: msgType, why: damage }, 'FIX message garbled; ignored');
      this.#deps.hooks.onRefused('garbled');
      return;
    }
    const seq = Number(view.getTyped(MsgTag.MsgSeqNum));
    const { SenderCompId: senderCompId, TargetCompID: targetCompId } = this.config.description;
    const foreign = foreignHeader(field, { beginString: BEGIN_STRING, senderCompId, targetCompId });
    if (foreign !== null) {
      this.#endReason ??= `a message of another session from the partner (${foreign.reject?.text ?? foreign.logout})`;
      if (foreign.reject !== null) this.#reject(msgType, seq, foreign.reject);
      this.#endWithLogout(foreign.logout);
      return;
    }
    const expected = this.lastPeerSeqNum() + 1;
    const resets = msgType === MsgType.SequenceReset || (msgType === MsgType.Logon && view.getTyped(MsgTag.ResetSeqNumFlag) === true);
    const wentBack = seq < expected && !resets && view.getTyped(MsgTag.PossDupFlag) !== true;
    if (msgType === MsgType.SequenceReset && !this.#sequenceReset(view, seq, expected)) return;
    // A number below the one expected is a message taken already, unless it is one jspurefix asked for.
    if (wentBack && !this.coordinator.pendingResendRequests.some((gap) => seq >= gap.begin && seq <= gap.end)) {
      this.#wentBack(msgType, seq, expected);
      return;
    }
    let received: (message: PartnerMessage | null) => Received = (message) => ({ kind: 'message', seq, message });
    if (msgType === MsgType.SequenceReset) {
      const newSeqNo = Number(view.getTyped(MsgTag.NewSeqNo));
      received = () => (view.getTyped(MsgTag.GapFillFlag) === true ? { kind: 'gap_fill', seq, newSeqNo } : { kind: 'reset', newSeqNo });
    } else if (msgType === MsgType.Logon && view.getTyped(MsgTag.ResetSeqNumFlag) === true) {
      received = () => ({ kind: 'reset', newSeqNo: seq + 1 });
    }
    this.#captured = null;
    this.#rejected = false;
    this.#refusal = SESSION_TYPES.has(msgType)
      ? null
      : checkApplicationMessage(msgType, field, (type) => this.config.definitions.message.get(type)?.msgType === type);
    super.onMsg(msgType, view);
    // jspurefix takes any NewSeqNo as the next number: a copy of a gap fill dealt with must not lower it.
    if (msgType === MsgType.SequenceReset) this.sessionState.lastPeerMsgSeqNum = Math.max(this.lastPeerSeqNum(), expected - 1);
    const message = this.#captured as PartnerMessage | null;
    const rejected = this.#rejected;
    this.#captured = null;
    this.#refusal = null;
    this.#rejected = false;
    // An application message jspurefix did not forward was not applied: its number stays owed. One
    // refused with a Reject has had its answer: its number is dealt with.
    if (!SESSION_TYPES.has(msgType) && message === null && !rejected) return;
    this.#inbound.push(received(message));
  }

  protected override onSessionMsg(msgType: string, view: MsgView): void {
    if (msgType === MsgType.Reject) this.#captured = readPartnerMessage(msgType, view, this.#deps.clock.now().getTime());
    if (msgType === MsgType.Logout && !this.#loggingOut) {
      const text = view.getString(MsgTag.Text);
      this.#endReason ??= `logged out by the partner${this.#loggedOn ? '' : ' at logon'}${text === null || text === undefined || text === '' ? '' : `: ${text}`}`;
      this.#deps.log.warn(
        { partner_id: this.#deps.partnerId, text },
        this.#loggedOn ? 'the partner logged the FIX session out' : 'the partner refused the FIX logon',
      );
    }
    super.onSessionMsg(msgType, view);
  }

  protected override onApplicationMsg(msgType: string, view: MsgView): void {
    const refusal = this.#refusal;
    if (refusal === null) {
      this.#captured = readPartnerMessage(msgType, view, this.#deps.clock.now().getTime());
      return;
    }
    this.#rejected = true;
    this.#reject(msgType, Number(view.getTyped(MsgTag.MsgSeqNum)), refusal);
  }

  /**
   * The partner's MsgSeqNum went below the one expected, without PossDup: nothing of the message is
   * taken; the session ends as FIX asks, with a Logout that says why (QuickFIX's words).
   */
  #wentBack(msgType: string, seq: number, expected: number): void {
    this.#endReason ??= `MsgSeqNum ${seq} from the partner is below the ${expected} expected: the partner's numbers went back`;
    const { partnerId, log } = this.#deps;
    log.error({ partner_id: partnerId, msg_type: msgType, seq, expected }, "FIX session ends: the partner's sequence numbers went back");
    this.#endWithLogout(`MsgSeqNum too low, expecting ${expected} but received ${seq}`);
  }

  /** Sends a Logout whose Text says why (once), then ends the connection without waiting for the partner's. */
  #endWithLogout(text: string): void {
    if (this.#loggingOut) return;
    this.#loggingOut = true;
    this.send(MsgType.Logout, { Text: text }, () => this.#fail(new Error(this.#endReason ?? text)));
  }

  /** Refuses the partner's message `seq` with a Reject (35=3). */
  #reject(msgType: string, seq: number, refusal: SessionRejection): void {
    const { partnerId, log, hooks } = this.#deps;
    const { reason, tag, text } = refusal;
    log.warn({ partner_id: partnerId, msg_type: msgType, seq, reason, tag, text }, 'FIX message refused with a Reject (35=3)');
    hooks.onRefused('session_reject');
    const ref = tag === null ? {} : { RefTagID: tag };
    this.send(MsgType.Reject, { RefSeqNum: seq, ...ref, RefMsgType: msgType, SessionRejectReason: reason, Text: text });
  }

  /**
   * A SequenceReset as FIX 4.4 has it (sequence-reset.ts): refused with a Reject when it would lower
   * the number, the gap before a gap fill asked for at once. Returns whether it goes on to jspurefix.
   */
  #sequenceReset(view: MsgView, seq: number, expected: number): boolean {
    const newSeqNo = Number(view.getTyped(MsgTag.NewSeqNo));
    const action = sequenceReset({ seq, newSeqNo, gapFill: view.getTyped(MsgTag.GapFillFlag) === true }, expected);
    if (action.kind === 'follow') {
      if (action.askFor !== null) this.send(MsgType.ResendRequest, { BeginSeqNo: action.askFor.begin, EndSeqNo: action.askFor.end });
      return true;
    }
    this.#reject(MsgType.SequenceReset, seq, { reason: SESSION_REJECT_REASON.valueIncorrect, tag: 36, text: action.text });
    return false;
  }

  protected override checkForwardMsg(msgType: string, view: MsgView): void {
    // jspurefix drops the session when an application message arrives while it waits for the answer
    // to its TestRequest or ResendRequest; the message is as good then as at any other time.
    if (BUSY_STATES.has(this.getState())) this.setState(SessionState.ActiveNormalSession);
    super.checkForwardMsg(msgType, view);
  }

  /**
   * A gap (messages received beyond it: held ones, or only session messages, as after a Logon
   * numbered past it) is asked for again when the partner has not filled it within gapTimeoutMs
   * (jspurefix asks once, when it sees the gap, and not again); after GAP_REQUESTS such requests
   * the connection is dropped. The held messages are never applied past the gap: the committed
   * number stays before it, so the next logon asks for everything from the gap on.
   */
  #watchGap(): void {
    const gap = this.loggedOn ? this.#inbound.openGap() : null;
    if (gap === null) {
      this.#gap = null;
      return;
    }
    const now = this.#deps.clock.now().getTime();
    if (this.#gap === null || this.#gap.begin !== gap.begin) {
      this.#gap = { begin: gap.begin, since: now, asked: 0 };
      return;
    }
    if (now - this.#gap.since < this.#deps.gapTimeoutMs) return;
    const { partnerId, log } = this.#deps;
    const waited = { partner_id: partnerId, begin: gap.begin, end: gap.end, held: gap.held, asked: this.#gap.asked };
    if (this.#gap.asked >= GAP_REQUESTS) {
      this.#endReason ??= `the partner did not resend messages ${gap.begin} to ${gap.end}, asked for again ${GAP_REQUESTS} times; ${gap.held} later message(s) wait for them`;
      log.error(waited, 'FIX gap never filled by the partner; the connection is dropped, the next logon asks again');
      this.#fail(new Error(this.#endReason));
      return;
    }
    log.warn(waited, 'FIX gap not filled by the partner; messages after it are held, asking again');
    this.#gap = { begin: gap.begin, since: now, asked: this.#gap.asked + 1 };
    this.send(MsgType.ResendRequest, { BeginSeqNo: gap.begin, EndSeqNo: gap.end });
  }

  // --- Lifecycle ---

  #fail(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    this.#deps.log.warn({ partner_id: this.#deps.partnerId, err: failure }, 'FIX session ends on an error');
    if (this.getState() !== SessionState.Stopped) this.terminate(failure);
  }

  protected onReady(_view: MsgView): void {
    this.#loggedOn = true;
    this.#deps.hooks.onLoggedOn();
  }

  protected onStopped(error?: Error): void {
    this.#loggedOn = false;
    this.#deps.hooks.onStopped(error);
  }

  protected onLogon(_view: MsgView, _user: string, _password: string): boolean {
    return true;
  }

  protected onDecoded(msgType: string, text: string): void {
    countMessage(this.#counters, 'received', msgType, text);
    logMessage(this.#deps.log, this.#deps.partnerId, 'received', msgType, text);
  }

  protected onEncoded(msgType: string, text: string): void {
    countMessage(this.#counters, 'sent', msgType, text);
    logMessage(this.#deps.log, this.#deps.partnerId, 'sent', msgType, text);
  }
}

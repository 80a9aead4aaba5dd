import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { MsgType, type ILooseObject, type SendCallback } from './api.js';
import type { Clock } from '../../../lib/clock.js';
import type { Transact } from '../../../storage/database.js';
import type { Database } from '../../../storage/schema.js';
import { commitSent, insertMessage, insertMessages, messagesBetween, SequenceConflictError } from '../fix.repository.js';
import type { SessionCounters } from '../fix-metrics.js';
import type { FixBody } from '../mapping.js';

/** What the application adds to the transaction that commits an application message as sent. */
export type RecordSend = (trx: Kysely<Database>, seq: number, at: number) => Promise<void>;

/** Where a session's messages and sequence numbers are committed, and what it logs with. */
export interface SessionStorage {
  readonly partnerId: string;
  readonly db: Kysely<Database>;
  readonly transact: Transact;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
}

export type Outbound =
  | {
      readonly kind: 'send';
      readonly msgType: string;
      readonly body: ILooseObject;
      readonly callback: SendCallback | null;
      readonly app?: AppSend;
    }
  | { readonly kind: 'resend'; readonly begin: number; readonly end: number };

export interface AppSend {
  readonly clOrdId: string | null;
  readonly body: FixBody;
  readonly record: RecordSend;
  readonly settle: (error: Error | null, seq: number) => void;
}

/** The most application messages committed as sent in one transaction, and partner messages applied in one. */
export const MAX_BATCH = 100;

/** An application message sent for the first time (not a PossDup copy): it is committed before it leaves. */
function isFirstSend(item: Outbound): item is Extract<Outbound, { kind: 'send' }> {
  return (
    item.kind === 'send' &&
    item.app !== undefined &&
    (item.body.StandardHeader as { PossDupFlag?: boolean } | undefined)?.PossDupFlag !== true
  );
}

export interface Transmitter {
  msgSeqNum: number;
  time: Date | undefined;
}

/** What the queue needs of the jspurefix session it sends for. */
export interface OutboundLink {
  /** jspurefix's transmitter while connected: the next sequence number, and the SendingTime to stamp. */
  transmitter(): Transmitter | null;
  stopped(): boolean;
  /** Hands a message to jspurefix's encoder (AsciiSession's own send). */
  encode(msgType: string, body: ILooseObject, done: SendCallback): void;
  /** Ends the session on an error. */
  fail(error: unknown): void;
}

/**
 * The one queue every message of a session goes out through. Its sequence number is committed (with,
 * for an application message, the message itself and the caller's record of the hand-over) in one
 * transaction before jspurefix encodes it and its bytes leave; application messages queued together
 * share that transaction. ResendRequests are answered from that store: each application message
 * again with PossDupFlag (43=Y) and its first SendingTime as OrigSendingTime (122), session messages
 * as SequenceReset-GapFill.
 */
export class OutboundQueue {
  readonly #storage: SessionStorage;
  readonly #counters: SessionCounters;
  readonly #link: OutboundLink;
  readonly #outbound: Outbound[] = [];
  #pumping: Promise<void> | null = null;

  constructor(storage: SessionStorage, counters: SessionCounters, link: OutboundLink) {
    this.#storage = storage;
    this.#counters = counters;
    this.#link = link;
  }

  /** Resolves once every queued message is sent or failed. */
  async settled(): Promise<void> {
    await this.#pumping;
  }

  enqueue(item: Outbound): void {
    this.#outbound.push(item);
    this.#startPump();
  }

  #startPump(): void {
    if (this.#pumping !== null) return;
    this.#pumping = this.#pump().finally(() => {
      this.#pumping = null;
      // An item queued after the pump's last look at the queue, before this callback.
      if (this.#outbound.length > 0) this.#startPump();
    });
  }

  async #pump(): Promise<void> {
    for (let item = this.#outbound.shift(); item !== undefined; item = this.#outbound.shift()) {
      try {
        if (item.kind === 'resend') await this.#resend(item.begin, item.end);
        else if (isFirstSend(item)) await this.#sendApplications(this.#takeBatch(item));
        else await this.#sendOne(item);
      } catch (error) {
        this.#link.fail(error);
      }
    }
  }

  /** `first` and the application messages queued right behind it, in order, up to MAX_BATCH. */
  #takeBatch(first: Extract<Outbound, { kind: 'send' }>): Extract<Outbound, { kind: 'send' }>[] {
    const batch = [first];
    while (batch.length < MAX_BATCH) {
      const next = this.#outbound[0];
      if (next === undefined || next.kind !== 'send' || !isFirstSend(next)) break;
      batch.push(next);
      this.#outbound.shift();
    }
    return batch;
  }

  /**
   * Application messages queued together (orders handed over at the same moment) are committed as
   * sent in one transaction, each under its own sequence number, then handed to jspurefix in order:
   * one durable commit for the lot rather than one each, so that the session keeps up with
   * concurrent hand-overs. If the lot cannot be recorded, nothing of it was: each is then tried on
   * its own, as a single message is.
   */
  async #sendApplications(batch: Extract<Outbound, { kind: 'send' }>[]): Promise<void> {
    const transmitter = this.#link.transmitter();
    if (batch.length === 1 || transmitter === null || this.#link.stopped()) {
      for (const item of batch) await this.#sendOne(item);
      return;
    }
    const first = transmitter.msgSeqNum;
    const at = this.#storage.clock.now().getTime();
    try {
      await this.#storage.transact(async (trx) => {
        const partnerId = this.#storage.partnerId;
        // The lot's sequence numbers move in one statement and its messages are stored together.
        await commitSent(trx, partnerId, first, at, batch.length);
        await insertMessages(
          trx,
          batch.map((item, i) => {
            const app = item.app as AppSend;
            return {
              partner_id: partnerId,
              seq: first + i,
              msg_type: item.msgType,
              cl_ord_id: app.clOrdId,
              sending_time: at,
              body: JSON.stringify(app.body),
            };
          }),
        );
        for (const [i, item] of batch.entries()) await (item.app as AppSend).record(trx, first + i, at);
      });
    } catch (error) {
      if (error instanceof SequenceConflictError) {
        for (const item of batch) item.app?.settle(error, 0);
        this.#link.fail(error);
        return;
      }
      for (const item of batch) await this.#sendOne(item);
      return;
    }
    for (const [i, item] of batch.entries()) {
      const seq = first + i;
      if (this.#link.transmitter() !== transmitter) {
        // The connection fell: the rest is recorded as sent, and the partner will ask for it.
        item.app?.settle(null, seq);
        continue;
      }
      transmitter.time = new Date(at);
      await this.#handOver(item.msgType, item.body, (error, result) => {
        transmitter.time = undefined;
        const sent = result.header?.MsgSeqNum as number | undefined;
        if (error === null && sent !== seq) this.#link.fail(new Error(`jspurefix sent ${item.msgType} as ${sent}, committed as ${seq}`));
      });
      item.app?.settle(null, seq);
    }
  }

  async #sendOne(item: Extract<Outbound, { kind: 'send' }>): Promise<void> {
    const transmitter = this.#link.transmitter();
    const header = item.body.StandardHeader as { PossDupFlag?: boolean } | undefined;
    const possDup = header?.PossDupFlag === true;
    if (transmitter === null || this.#link.stopped()) {
      const error = new Error(`FIX session is not connected; ${item.msgType} not sent`);
      item.app?.settle(error, 0);
      item.callback?.(error, { msgType: item.msgType, header: null, encoded: null });
      return;
    }
    const seq = transmitter.msgSeqNum;
    if (!possDup) {
      const at = this.#storage.clock.now().getTime();
      try {
        await this.#storage.transact(async (trx) => {
          await commitSent(trx, this.#storage.partnerId, seq, at);
          if (item.app !== undefined) {
            await insertMessage(trx, {
              partner_id: this.#storage.partnerId,
              seq,
              msg_type: item.msgType,
              cl_ord_id: item.app.clOrdId,
              sending_time: at,
              body: JSON.stringify(item.app.body),
            });
            await item.app.record(trx, seq, at);
          }
        });
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        item.app?.settle(failure, seq);
        item.callback?.(failure, { msgType: item.msgType, header: null, encoded: null });
        // A session message that cannot be recorded cannot be sent, nor can anything after it.
        if (item.app === undefined || error instanceof SequenceConflictError) this.#link.fail(failure);
        return;
      }
      if (this.#link.transmitter() !== transmitter) {
        // The connection fell while committing: the message is recorded as sent, and the partner will
        // ask for it (ResendRequest) when the next connection's Logon shows a higher number.
        item.app?.settle(null, seq);
        return;
      }
      transmitter.time = new Date(at);
    }
    await this.#handOver(item.msgType, item.body, (error, result) => {
      transmitter.time = undefined;
      const sent = result.header?.MsgSeqNum as number | undefined;
      if (error === null && !possDup && sent !== seq)
        this.#link.fail(new Error(`jspurefix sent ${item.msgType} as ${sent}, committed as ${seq}`));
      item.callback?.(error, result);
    });
    item.app?.settle(null, seq);
  }

  /**
   * Hands a message to jspurefix's encoder and waits until it is encoded and written to the socket.
   * An encoder that has failed never answers: after 10 s the session ends, rather than the queue
   * waiting for ever.
   */
  #handOver(msgType: string, body: ILooseObject, done: SendCallback = () => undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#link.fail(new Error(`jspurefix did not encode ${msgType} within 10 s`));
        resolve();
      }, 10_000);
      this.#link.encode(msgType, body, (error, result) => {
        clearTimeout(timer);
        done(error, result);
        resolve();
      });
    });
  }

  /** Sends a message outside the sequence (PossDup): nothing to commit. */
  #sendAgain(msgType: string, body: ILooseObject): Promise<void> {
    return this.#handOver(msgType, body);
  }

  async #resend(begin: number, requestedEnd: number): Promise<void> {
    const transmitter = this.#link.transmitter();
    if (transmitter === null) return;
    const lastSent = transmitter.msgSeqNum - 1;
    const end = requestedEnd === 0 || requestedEnd > lastSent ? lastSent : requestedEnd;
    this.#storage.log.info({ partner_id: this.#storage.partnerId, begin, end }, 'FIX resend requested by the partner');
    if (begin > end) return;
    const stored = await messagesBetween(this.#storage.db, this.#storage.partnerId, begin, end);
    let next = begin;
    const gapFill = async (upTo: number) => {
      const now = this.#storage.clock.now();
      this.#counters.resent('gap_fill');
      await this.#sendAgain(MsgType.SequenceReset, {
        GapFillFlag: true,
        NewSeqNo: upTo,
        StandardHeader: { MsgSeqNum: next, PossDupFlag: true, SendingTime: now },
      });
    };
    for (const message of stored) {
      if (message.seq > next) await gapFill(message.seq);
      const body = JSON.parse(message.body) as ILooseObject;
      this.#counters.resent('application');
      await this.#sendAgain(message.msg_type, {
        ...body,
        StandardHeader: { MsgSeqNum: message.seq, PossDupFlag: true, SendingTime: new Date(message.sending_time) },
      });
      next = message.seq + 1;
    }
    if (next <= end) await gapFill(end + 1);
  }
}

import { FixMsgStoreRecord, type IFixMsgStoreRecord, type IFixSessionStore, type SessionId } from './api.js';
import type { FixMessageRow } from '../fix.table.js';

/**
 * jspurefix's session store (IFixSessionStore), backed by the service's database through the durable
 * session (durable-session.ts). jspurefix calls `put` and the two setters after a message has been
 * encoded, without waiting, and ignores their failures: committing there would be too late (the
 * bytes have left) and its file store is not atomic. So here they only keep jspurefix's view in
 * memory; the durable session commits the next sequence number to send before the bytes leave, and
 * the next one expected from the partner with the effects of the partner's messages.
 */
export class DatabaseSessionStore implements IFixSessionStore {
  senderSeqNum: number;
  targetSeqNum: number;
  readonly creationTime = new Date();

  constructor(
    readonly sessionId: SessionId,
    committed: { nextSenderSeq: number; nextTargetSeq: number },
    private readonly durable: {
      /** The messages sent under `from` to `to`, from the database. */
      messages(from: number, to: number): Promise<FixMessageRow[]>;
      /** The partner asked for a reset (ResetSeqNumFlag): both numbers start again at 1. */
      reset(): Promise<void>;
    },
  ) {
    this.senderSeqNum = committed.nextSenderSeq;
    this.targetSeqNum = committed.nextTargetSeq;
  }

  async initialize(): Promise<void> {}

  /** The message was stored by the durable session before its bytes left. */
  async put(_record: IFixMsgStoreRecord): Promise<void> {}

  async get(seqNum: number): Promise<IFixMsgStoreRecord | null> {
    return (await this.getRange(seqNum, seqNum))[0] ?? null;
  }

  async getRange(fromSeqNum: number, toSeqNum: number): Promise<IFixMsgStoreRecord[]> {
    const rows = await this.durable.messages(fromSeqNum, toSeqNum);
    return rows.map(
      (r) => new FixMsgStoreRecord(r.msg_type, new Date(r.sending_time), r.seq, JSON.parse(r.body) as Record<string, unknown>),
    );
  }

  async setSenderSeqNum(value: number): Promise<void> {
    this.senderSeqNum = value;
  }

  async setTargetSeqNum(value: number): Promise<void> {
    this.targetSeqNum = value;
  }

  async nextSenderSeqNum(): Promise<number> {
    return this.senderSeqNum++;
  }

  async nextTargetSeqNum(): Promise<number> {
    return this.targetSeqNum++;
  }

  async reset(): Promise<void> {
    this.senderSeqNum = 1;
    this.targetSeqNum = 1;
    await this.durable.reset();
  }

  async flush(): Promise<void> {}

  async dispose(): Promise<void> {}
}

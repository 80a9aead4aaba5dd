import { createServer, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { encodeFix, fixTime, FixFramer, type FixFrame } from './fix-wire.js';

/**
 * A FIX 4.4 acceptor written on the bytes, for the faults QuickFIX's executor never commits: messages
 * that are malformed, of an unknown type, garbled, for an order nobody sent, or sent twice. It keeps
 * the session layer a test needs and nothing more: it answers the Logon, TestRequests and
 * ResendRequests (its application messages again with PossDupFlag and OrigSendingTime, the rest as a
 * gap fill), numbers what it sends, and records everything both ways. It listens on 127.0.0.1 only.
 */
export interface RawGateway {
  readonly port: number;
  /** Messages from the service, in order, across connections. */
  readonly received: FixFrame[];
  /** Messages it sent, in order (what `send` wrote, garbled or not). */
  readonly sent: FixFrame[];
  /** Connections accepted so far. */
  connections(): number;
  /** The next MsgSeqNum it will use. */
  nextSeq(): number;
  /**
   * Sends an application or session message: `fields` after the header (MsgType excluded). `seq`
   * overrides the numbering (the next number is not advanced), `possDup` marks a copy, `checksum`
   * garbles the trailer, `senderCompId` puts another SenderCompID (49) in the header. Returns the
   * MsgSeqNum used.
   */
  send(
    msgType: string,
    fields: readonly (readonly [number, string | number])[],
    options?: { seq?: number; possDup?: { origSendingTime: string }; checksum?: string; senderCompId?: string },
  ): number;
  /** Ends the current connection without a Logout. */
  hangUp(): void;
  /** Starts its own numbers again at 1 and forgets what it sent, as a gateway reset without telling. */
  forgetNumbers(): void;
  /** Whether it answers ResendRequests (on at the start); off, it leaves them unanswered. */
  answerResends(answer: boolean): void;
}

export interface RawGatewayOptions {
  /** SenderCompID of the gateway (the partner's target_comp_id). */
  senderCompId: string;
  /** TargetCompID: the service (the partner's sender_comp_id). */
  targetCompId: string;
  /** 127.0.0.1's port to listen on; default any free one. */
  port?: number;
  /** Called for each application message from the service, after it is recorded. */
  onApplication?: (frame: FixFrame, gateway: RawGateway) => void;
}

export async function startRawGateway(t: TestContext, options: RawGatewayOptions): Promise<RawGateway> {
  const received: FixFrame[] = [];
  const sent: FixFrame[] = [];
  /** What it sent under each number, for resends: [msgType, fields, SendingTime]. */
  const store = new Map<number, { msgType: string; fields: readonly (readonly [number, string | number])[]; sendingTime: string }>();
  let next = 1;
  let connections = 0;
  let socket: Socket | null = null;
  let answeringResends = true;

  const write = (
    msgType: string,
    seq: number,
    fields: readonly (readonly [number, string | number])[],
    extra: { possDup?: { origSendingTime: string }; checksum?: string; senderCompId?: string } = {},
  ) => {
    const header: [number, string | number][] = [
      [35, msgType],
      [49, extra.senderCompId ?? options.senderCompId],
      [56, options.targetCompId],
      [34, seq],
      [52, fixTime()],
    ];
    if (extra.possDup !== undefined) header.push([43, 'Y'], [122, extra.possDup.origSendingTime]);
    const bytes = encodeFix([...header, ...fields], extra.checksum === undefined ? {} : { checksum: extra.checksum });
    sent.push(new FixFramer().push(bytes)[0] as FixFrame);
    socket?.write(bytes);
  };

  const gateway: RawGateway = {
    port: 0,
    received,
    sent,
    connections: () => connections,
    nextSeq: () => next,
    send(msgType, fields, extra = {}) {
      const seq = extra.seq ?? next;
      if (extra.seq === undefined) {
        next += 1;
        store.set(seq, { msgType, fields, sendingTime: fixTime() });
      }
      write(msgType, seq, fields, extra);
      return seq;
    },
    hangUp() {
      socket?.destroy();
      socket = null;
    },
    forgetNumbers() {
      next = 1;
      store.clear();
    },
    answerResends(answer) {
      answeringResends = answer;
    },
  };

  const resend = (begin: number, end: number) => {
    const last = end === 0 ? next - 1 : Math.min(end, next - 1);
    let gapFrom: number | null = null;
    const flushGap = (upTo: number) => {
      if (gapFrom === null) return;
      write(
        '4',
        gapFrom,
        [
          [123, 'Y'],
          [36, upTo],
        ],
        { possDup: { origSendingTime: fixTime() } },
      );
      gapFrom = null;
    };
    for (let seq = begin; seq <= last; seq++) {
      const stored = store.get(seq);
      if (stored === undefined || ['A', '0', '1', '2', '4', '5'].includes(stored.msgType)) {
        gapFrom ??= seq;
        continue;
      }
      flushGap(seq);
      write(stored.msgType, seq, stored.fields, { possDup: { origSendingTime: stored.sendingTime } });
    }
    flushGap(last + 1);
  };

  const server = createServer((accepted) => {
    socket?.destroy();
    socket = accepted;
    connections += 1;
    accepted.setNoDelay(true);
    accepted.on('error', () => undefined);
    const framer = new FixFramer();
    accepted.on('data', (chunk: Buffer) => {
      if (socket !== accepted) return;
      for (const frame of framer.push(chunk)) {
        received.push(frame);
        const type = frame.fields.get(35);
        if (type === 'A')
          gateway.send('A', [
            [98, 0],
            [108, frame.fields.get(108) ?? '30'],
          ]);
        else if (type === '1') gateway.send('0', [[112, frame.fields.get(112) ?? '']]);
        else if (type === '2' && answeringResends) resend(Number(frame.fields.get(7)), Number(frame.fields.get(16)));
        else if (type === '5') gateway.send('5', []);
        else if (type !== undefined && !['0', '3', '4'].includes(type)) options.onApplication?.(frame, gateway);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  t.after(async () => {
    gateway.hangUp();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return Object.assign(gateway, { port: (server.address() as { port: number }).port });
}

/** The raw gateway acknowledges each NewOrderSingle with a New. */
export function acceptOrders(frame: FixFrame, gateway: RawGateway): void {
  if (frame.fields.get(35) !== 'D' || frame.fields.get(43) === 'Y') return;
  gateway.send('8', [
    [37, 'GW-1'],
    [11, frame.fields.get(11) ?? ''],
    [17, `NEW-${frame.fields.get(11)}`],
    [150, '0'],
    [39, '0'],
    [55, 'KOLA'],
    [54, '1'],
    [151, frame.fields.get(38) ?? '0'],
    [14, 0],
    [6, 0],
  ]);
}

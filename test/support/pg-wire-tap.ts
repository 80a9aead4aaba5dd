import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * What went between clients and PostgreSQL through a tap, read from the protocol (version 3) rather
 * than from what the client believes it sent:
 *
 * - `statements`: statements PostgreSQL finished, one per CommandComplete, ErrorResponse or
 *   EmptyQueryResponse it sent once the connection was ready;
 * - `roundTrips`: times a client sent while none of its connection's requests (a Sync or a simple
 *   Query) was still unanswered by a ReadyForQuery: requests sent behind an unanswered one share its
 *   round trip;
 * - `syncs`: ReadyForQuery answers, one for each Sync or simple Query the client sent: PostgreSQL
 *   flushes its socket at each, so statements pipelined with one Sync come back in one write;
 * - `transactions`: transaction blocks ended, from the status PostgreSQL gives in each ReadyForQuery
 *   (in a block or failed, then idle); a statement that runs on its own is not one.
 *
 * Connections that switch to TLS or GSSAPI encryption cannot be read and are only counted in
 * `unreadable`. Counts start when a connection is ready, so authentication is not counted.
 */
export interface TapCounts {
  connections: number;
  unreadable: number;
  statements: number;
  roundTrips: number;
  syncs: number;
  transactions: number;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Splits one direction's bytes into messages, across chunk boundaries. */
class MessageReader {
  #buffer: Buffer = Buffer.alloc(0);

  constructor(
    /** Whether the next message is an untyped startup-phase one (a length, then the body). */
    public untyped: boolean,
  ) {}

  /** The complete messages of `chunk` (with what was left over before): type (0 when untyped) and body. */
  *read(chunk: Buffer): Generator<{ type: number; body: Buffer }> {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const head = this.untyped ? 0 : 1;
      if (this.#buffer.length < head + 4) return;
      const total = head + this.#buffer.readInt32BE(head);
      if (this.#buffer.length < total) return;
      const type = this.untyped ? 0 : (this.#buffer[0] as number);
      const body = this.#buffer.subarray(head + 4, total);
      this.#buffer = this.#buffer.subarray(total);
      yield { type, body };
    }
  }
}

const code = (letter: string) => letter.charCodeAt(0);
const [QUERY, SYNC, TERMINATE] = ['Q', 'S', 'X'].map(code) as [number, number, number];
const [COMPLETE, ERROR, EMPTY, READY] = ['C', 'E', 'I', 'Z'].map(code) as [number, number, number, number];
const IDLE = code('I');

/** One client connection's reading of both directions. */
class Conversation {
  readonly #client = new MessageReader(true);
  readonly #server = new MessageReader(false);
  /** The server's one-byte answer to an encryption request comes next. */
  #answerByte = false;
  #unreadable = false;
  #ready = false;
  /** Syncs and Queries not answered yet. */
  #awaiting = 0;
  /** A round trip is under way (something sent, not every request answered). */
  #inFlight = false;
  #status = IDLE;

  constructor(private readonly counts: TapCounts) {}

  fromClient(chunk: Buffer): void {
    if (this.#unreadable) return;
    for (const { type, body } of this.#client.read(chunk)) {
      if (this.#client.untyped) {
        const request = body.readInt32BE(0);
        if (request === SSL_REQUEST || request === GSSENC_REQUEST) {
          this.#answerByte = true;
        } else {
          // The startup message (or a cancel request, after which nothing more is sent).
          this.#client.untyped = false;
        }
        continue;
      }
      if (!this.#ready || type === TERMINATE) continue;
      if (!this.#inFlight) {
        this.#inFlight = true;
        this.counts.roundTrips++;
      }
      if (type === SYNC || type === QUERY) this.#awaiting++;
    }
  }

  fromServer(chunk: Buffer): void {
    if (this.#unreadable) return;
    let rest = chunk;
    if (this.#answerByte && rest.length > 0) {
      this.#answerByte = false;
      if (rest[0] !== code('N')) {
        this.#unreadable = true;
        this.counts.unreadable++;
        return;
      }
      rest = rest.subarray(1);
    }
    for (const { type, body } of this.#server.read(rest)) {
      if (type === READY) {
        const status = body[0] as number;
        if (!this.#ready) {
          this.#ready = true;
        } else {
          this.counts.syncs++;
          this.#awaiting = Math.max(0, this.#awaiting - 1);
          if (this.#awaiting === 0) this.#inFlight = false;
          if (status === IDLE && this.#status !== IDLE) this.counts.transactions++;
        }
        this.#status = status;
      } else if (this.#ready && (type === COMPLETE || type === ERROR || type === EMPTY)) {
        this.counts.statements++;
      }
    }
  }
}

/**
 * A TCP relay in front of a PostgreSQL server that counts what passes (TapCounts). Point a client's
 * connection string at `port` on 127.0.0.1 instead of the server.
 */
export class PgWireTap {
  readonly counts: TapCounts = { connections: 0, unreadable: 0, statements: 0, roundTrips: 0, syncs: 0, transactions: 0 };
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  #port = 0;

  private constructor(upstream: { host: string; port: number } | { path: string }) {
    this.#server = createServer((client) => this.#relay(client, connect(upstream)));
  }

  /** A tap in front of the server that `url` (a postgres:// connection string) names, over TCP or a Unix socket. */
  static async start(url: string): Promise<PgWireTap> {
    const at = new URL(url);
    const port = Number(at.port || 5432);
    const socketDir = at.searchParams.get('host');
    const tap = new PgWireTap(
      socketDir?.startsWith('/') ? { path: `${socketDir}/.s.PGSQL.${port}` } : { host: at.hostname || '127.0.0.1', port },
    );
    await new Promise<void>((resolve) => tap.#server.listen(0, '127.0.0.1', resolve));
    tap.#port = (tap.#server.address() as { port: number }).port;
    return tap;
  }

  get port(): number {
    return this.#port;
  }

  #relay(client: Socket, database: Socket): void {
    const conversation = new Conversation(this.counts);
    this.counts.connections++;
    for (const socket of [client, database]) {
      this.#sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      conversation.fromClient(chunk);
      database.write(chunk);
    });
    database.on('data', (chunk: Buffer) => {
      conversation.fromServer(chunk);
      client.write(chunk);
    });
    client.on('close', () => database.destroy());
    database.on('close', () => client.destroy());
  }

  /** `url` (a postgres:// connection string) pointed at the tap. */
  through(url: string): string {
    const at = new URL(url);
    at.hostname = '127.0.0.1';
    at.port = String(this.#port);
    at.searchParams.delete('host');
    return at.href;
  }

  /** A copy of the counts now, to subtract from a later one. */
  snapshot(): TapCounts {
    return { ...this.counts };
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** `after` minus `before`, member by member. */
export function tapDifference(after: TapCounts, before: TapCounts): TapCounts {
  return {
    connections: after.connections - before.connections,
    unreadable: after.unreadable - before.unreadable,
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    syncs: after.syncs - before.syncs,
    transactions: after.transactions - before.transactions,
  };
}

import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import {
  AsciiSessionMsgFactory,
  DefinitionFactory,
  FixDuplex,
  JsFixConfig,
  JsFixLoggerFactory,
  MsgTransport,
  SessionContainer,
  type FixDefinitions,
  type IJsFixLogger,
  type ISessionDescription,
  type JsFixLogFields,
} from './api.js';
import { BEGIN_STRING } from '../../../partners/fix-settings.js';

/**
 * The one place that builds jspurefix's objects: its FIX 4.4 dictionary, a session's configuration
 * and a transport over a socket this service opened. jspurefix encodes, decodes and runs the FIX
 * session layer; the connector supplies the socket, the durable store and the application.
 */

const SOH = 1;

let dictionary: Promise<FixDefinitions> | undefined;

/** jspurefix's FIX 4.4 dictionary (its data/FIX44.xml, QuickFIX's format), parsed once per process. */
export function fix44Dictionary(): Promise<FixDefinitions> {
  dictionary ??= new DefinitionFactory().getDefinitions('qf44');
  return dictionary;
}

/** Whether `log` writes lines of `level` (its level is that or below), checked before building one. */
export function logsAt(log: FastifyBaseLogger, level: 'debug' | 'trace'): boolean {
  return log.level === 'trace' || (level === 'debug' && log.level === 'debug');
}

/** Password (554) and NewPassword (925) values in a FIX message to be logged, masked. */
export function maskSecrets(text: string): string {
  return text.replace(/(^|[|\x01])(554|925)=[^|\x01]*/g, '$1$2=***');
}

/** A FIX message received from the partner or sent to it, at debug level, secrets masked (built only when logged). */
export function logMessage(log: FastifyBaseLogger, partnerId: string, direction: 'sent' | 'received', msgType: string, text: string): void {
  if (logsAt(log, 'debug')) log.debug({ partner_id: partnerId, msg_type: msgType, fix: maskSecrets(text) }, `FIX message ${direction}`);
}

/** jspurefix's logging, into the service's structured logs; its information lines are debug here. */
class PinoLogFactory extends JsFixLoggerFactory {
  constructor(private readonly log: FastifyBaseLogger) {
    super();
  }

  logger(type: string, context?: JsFixLogFields): IJsFixLogger {
    const log = this.log.child({ fix_component: type, ...(context === undefined ? {} : { fix_context: context }) });
    // jspurefix logs every message it reads and writes: nothing is built for a level that is off.
    return {
      info: (message, fields) => {
        if (logsAt(log, 'debug')) log.debug({ ...fields }, maskSecrets(message));
      },
      debug: (message, fields) => {
        if (logsAt(log, 'trace')) log.trace({ ...fields }, maskSecrets(message));
      },
      warning: (message, fields) => log.warn({ ...fields }, maskSecrets(message)),
      error: (error, fields) => log.warn({ ...fields, err: error }, 'jspurefix error'),
    };
  }

  plain(): IJsFixLogger {
    return this.logger('plain');
  }
}

export interface SessionIdentity {
  readonly senderCompId: string;
  readonly targetCompId: string;
  readonly heartbeatS: number;
  readonly username: string | null;
  readonly password: string | null;
}

/** A jspurefix configuration for one connection of an initiator session. */
export function sessionConfig(definitions: FixDefinitions, identity: SessionIdentity, log: FastifyBaseLogger): JsFixConfig {
  const description = {
    Name: identity.senderCompId,
    SenderCompId: identity.senderCompId,
    TargetCompID: identity.targetCompId,
    BeginString: BEGIN_STRING,
    HeartBtInt: identity.heartbeatS,
    // Sequence numbers continue across connections and restarts: never reset at logon.
    ResetSeqNumFlag: false,
    // jspurefix's Logon factory writes these two; null leaves them off the Logon.
    Logon: { Username: identity.username, Password: identity.password },
    application: { name: 'cauri', type: 'initiator', protocol: 'ascii', dictionary: 'qf44', reconnectSeconds: 0 },
  } as unknown as ISessionDescription;
  const logFactory = new PinoLogFactory(log);
  const config = new JsFixConfig(new AsciiSessionMsgFactory(description), definitions, description, SOH, logFactory);
  // The session's own objects (encoder, parser, buffers) live in a child of jspurefix's container.
  const container = new SessionContainer();
  container.registerSession(config, container.newChild(description));
  return config;
}

/** A socket this service connected, as jspurefix's duplex. */
class SocketDuplex extends FixDuplex {
  constructor(private readonly socket: Socket) {
    super();
    this.readable = socket;
    this.writable = socket;
  }

  end(): void {
    this.socket.end();
  }

  override destroy(): void {
    this.socket.destroy();
  }
}

/**
 * A jspurefix transport over `socket`. jspurefix reports stream failures as 'error' events, and an
 * EventEmitter throws an 'error' nobody listens to: after the session has unsubscribed (a late error
 * on a closing socket) that would end the process, so a listener that only logs stays attached.
 */
export function transportOver(config: JsFixConfig, socket: Socket, log: FastifyBaseLogger): MsgTransport {
  const transport = new MsgTransport(0, config, new SocketDuplex(socket));
  const quiet = (where: string) => (error: unknown) =>
    log.debug({ err: error, where }, 'FIX transport error after the session let go of it');
  socket.on('error', quiet('socket'));
  transport.transmitter.on('error', quiet('encoder'));
  transport.transmitter.encodeStream.on('error', quiet('encoder stream'));
  transport.receiver.on('error', quiet('parser'));
  return transport;
}

import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { isoMillis, type Clock } from '../../lib/clock.js';
import type { Transact } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import type { FixCredentials, FixTlsMaterial } from './credentials.js';
import { insertSessionIfMissing, leaseSession, openSession, releaseSession, setSessionState } from './fix.repository.js';
import type { FixSessionState } from './fix.table.js';
import { NO_COUNTERS, type SessionCounters } from './fix-metrics.js';
import type { DurableFixSession, DurableSessionHooks } from './jspurefix/durable-session.js';
import { BEGIN_STRING, type FixSettings } from '../../partners/fix-settings.js';
import { sessionWindow } from './session-window.js';
import { tlsOptions } from './tls-material.js';

export interface PartnerFixConfig {
  readonly settings: FixSettings;
  readonly credentials: FixCredentials | null;
  /** Its TLS client certificate and gateway CAs, when the operator gave them. */
  readonly tls?: FixTlsMaterial | null;
}

export interface RunnerOptions {
  /** This process, as the holder of session leases. */
  readonly owner: string;
  /** A session's lease lasts this long and is renewed at a third of it. */
  readonly leaseMs: number;
  /** How long a connection, and then the answer to the Logon, may take. */
  readonly connectTimeoutMs: number;
  /** Whether `tls: false` may be used here (sandbox, or CAURI_FIX_ALLOW_PLAINTEXT=true). */
  readonly plaintextAllowed: boolean;
  readonly random: () => number;
}

export interface RunnerDeps {
  readonly partnerId: string;
  readonly db: Kysely<Database>;
  readonly transact: Transact;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** The partner's settings and credentials, read again before every connection. */
  readonly loadPartner: () => Promise<PartnerFixConfig | null>;
  readonly applyInbound: DurableSessionHooks['applyInbound'];
  readonly onRefused: DurableSessionHooks['onRefused'];
  /** Runs each time the session logs on (orders that waited for it can go now). */
  readonly onLoggedOn?: () => Promise<void>;
  readonly options: RunnerOptions;
  /** The partner's counters on /metrics. */
  readonly counters?: SessionCounters;
}

/** Delay before reconnecting after `failures` attempts in a row: 1 s doubling to 30 s, +-20 %. */
export function reconnectDelayMs(failures: number, random: () => number): number {
  return Math.round(Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1)) * (0.8 + 0.4 * random()));
}

function connectSocket(settings: FixSettings, tls: FixTlsMaterial | null, timeoutMs: number): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    // The material is passed in memory; the gateway's certificate is always verified (against `ca`
    // when given, else the public authorities Node.js trusts).
    const socket = settings.tls
      ? tlsConnect({
          host: settings.host,
          port: settings.port,
          ...(isIP(settings.host) === 0 ? { servername: settings.host } : {}),
          ...tlsOptions(tls),
          rejectUnauthorized: true,
        })
      : netConnect({ host: settings.host, port: settings.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection to ${settings.host}:${settings.port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once(settings.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * The session's end as operators read it. A gateway that refuses the client certificate (TLS 1.3
 * checks it after the client's side of the handshake is done) closes the connection without saying
 * why: the error says where to look.
 */
function describeFailure(failure: unknown, tlsBeforeLogon: boolean): string {
  const message = failure instanceof Error ? failure.message : String(failure);
  const code = (failure as NodeJS.ErrnoException | null)?.code;
  if (tlsBeforeLogon && (code === 'ECONNRESET' || code === 'EPIPE' || /ECONNRESET|EPIPE|socket hang up/.test(message))) {
    return `the gateway closed the TLS connection before answering the Logon (does it accept the client certificate?): ${message}`;
  }
  return message;
}

/**
 * Keeps one partner's FIX session up: inside its daily window, while this process holds the
 * session's lease, connects (TLS unless the settings say otherwise), logs on, and reconnects with
 * backoff when the connection ends. One DurableFixSession per connection, built on the sequence
 * numbers committed in the database.
 */
export class FixSessionRunner {
  readonly #deps: RunnerDeps;
  #session: DurableFixSession | null = null;
  #loop: Promise<void> | null = null;
  #stopping = false;
  #wake: (() => void) | null = null;
  #state: FixSessionState = 'disconnected';
  #settings: FixSettings | null = null;

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
  }

  get state(): FixSessionState {
    return this.#state;
  }

  /** The session, when it is logged on. */
  get session(): DurableFixSession | null {
    return this.#session?.loggedOn === true ? this.#session : null;
  }

  /** The settings the current connection was opened with (read before it), or null between connections. */
  get settings(): FixSettings | null {
    return this.#session === null ? null : this.#settings;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Logs out (waiting up to `graceMs` for the partner to confirm), stops reconnecting, releases the lease. */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    const session = this.#session;
    if (session !== null) {
      session.logout();
      const timer = setTimeout(() => session.drop('stopping'), graceMs);
      await this.#loop;
      clearTimeout(timer);
    } else {
      await this.#loop;
    }
    // Another process may take the session over at once rather than when the lease runs out.
    await this.#deps.transact((trx) => releaseSession(trx, this.#deps.partnerId, this.#deps.options.owner)).catch(() => undefined);
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      let wait: number;
      try {
        const outcome = await this.#connectOnce();
        if (outcome.kind === 'ended') {
          failures = outcome.loggedOn ? 1 : failures + 1;
          wait = reconnectDelayMs(failures, this.#deps.options.random);
        } else {
          wait = outcome.waitMs;
        }
      } catch (error) {
        failures += 1;
        wait = reconnectDelayMs(failures, this.#deps.options.random);
        this.#deps.log.warn({ partner_id: this.#deps.partnerId, err: error, retry_in_ms: wait }, 'FIX connection failed');
        await this.#setState('disconnected', error instanceof Error ? error.message : String(error)).catch(() => undefined);
      }
      if (!this.#stopping) await this.#sleep(wait);
    }
  }

  async #connectOnce(): Promise<{ kind: 'ended'; loggedOn: boolean } | { kind: 'waiting'; waitMs: number }> {
    const { partnerId, clock, options, log } = this.#deps;
    const partner = await this.#deps.loadPartner();
    if (partner === null) {
      log.error({ partner_id: partnerId }, 'partner uses the fix connector but has no fix settings; import them');
      return { kind: 'waiting', waitMs: 30_000 };
    }
    const { settings, credentials, tls = null } = partner;
    if (!settings.tls && !options.plaintextAllowed) {
      log.error({ partner_id: partnerId }, 'plaintext FIX is refused here (tls: false without CAURI_FIX_ALLOW_PLAINTEXT=true)');
      return { kind: 'waiting', waitMs: 60_000 };
    }
    const now = clock.now().getTime();
    const window = sessionWindow(now, settings.start_time, settings.end_time);
    const key = {
      partnerId,
      beginString: BEGIN_STRING,
      senderCompId: settings.sender_comp_id,
      targetCompId: settings.target_comp_id,
      period: window.open && window.opened !== 0 ? isoMillis(window.opened) : null,
    };
    await this.#deps.transact((trx) => insertSessionIfMissing(trx, key, now));
    if (!window.open) {
      await this.#setState('outside_window', null);
      return { kind: 'waiting', waitMs: Math.min(60_000, window.opens - now) };
    }
    if (!(await this.#lease())) return { kind: 'waiting', waitMs: Math.ceil(options.leaseMs / 3) };

    const row = await this.#deps.transact((trx) => openSession(trx, key, now));
    await this.#setState('connecting', undefined);
    // jspurefix takes about a second of CPU to load: only processes that run a FIX session load it.
    const [{ DurableFixSession }, { fix44Dictionary, sessionConfig, transportOver }] = await Promise.all([
      import('./jspurefix/durable-session.js'),
      import('./jspurefix/library.js'),
    ]);
    const socket = await connectSocket(settings, tls, options.connectTimeoutMs);
    if (this.#stopping) {
      socket.destroy();
      return { kind: 'ended', loggedOn: false };
    }
    // The gateway closing the connection reads better than how jspurefix takes it (a broken transport).
    let closedByGateway = false;
    socket.once('end', () => (closedByGateway = true));
    const sessionLog = log.child({ partner_id: partnerId });
    const config = sessionConfig(
      await fix44Dictionary(),
      {
        senderCompId: settings.sender_comp_id,
        targetCompId: settings.target_comp_id,
        heartbeatS: settings.heartbeat_s,
        username: credentials?.username ?? null,
        password: credentials?.password ?? null,
      },
      sessionLog,
    );
    const transport = transportOver(config, socket, sessionLog);
    let loggedOn = false;
    // jspurefix's run() settles on events that may fire before it listens (a stop during its start);
    // the session's end is also known from onStopped, which every way to Stopped calls.
    let stopped: (error: Error | undefined) => void = () => undefined;
    const ended = new Promise<Error | undefined>((resolve) => (stopped = resolve));
    const session = new DurableFixSession(config, {
      partnerId,
      db: this.#deps.db,
      transact: this.#deps.transact,
      clock,
      log: sessionLog,
      committed: { nextSenderSeq: row.next_sender_seq, nextTargetSeq: row.next_target_seq },
      counters: this.#deps.counters ?? NO_COUNTERS,
      // A partner answers a ResendRequest at once; a heartbeat interval without it is a gap left open.
      gapTimeoutMs: Math.max(1, settings.heartbeat_s) * 1000,
      hooks: {
        applyInbound: this.#deps.applyInbound,
        onRefused: this.#deps.onRefused,
        onLoggedOn: () => {
          loggedOn = true;
          (this.#deps.counters ?? NO_COUNTERS).loggedOn();
          sessionLog.info({ next_sender_seq: row.next_sender_seq }, 'FIX session logged on');
          this.#setState('logged_on', null, true).catch(() => undefined);
          this.#deps
            .onLoggedOn?.()
            .catch((error: unknown) =>
              sessionLog.warn({ err: error }, 'after the logon, orders waiting for the session could not be made due'),
            );
        },
        onStopped: (error) => {
          sessionLog.info({ err: error }, 'FIX session ended');
          stopped(error);
        },
      },
    });
    this.#session = session;
    this.#settings = settings;
    const renew = setInterval(
      () => {
        this.#lease().then(
          (held) => held || session.drop('the session lease passed to another process'),
          () => undefined,
        );
      },
      Math.ceil(options.leaseMs / 3),
    );
    const close = Number.isFinite(window.closes) ? setTimeout(() => session.logout(), Math.max(0, window.closes - now)) : null;
    // jspurefix waits for the answer to its Logon for ever; a gateway that never gives one is left.
    const logonDeadline = setTimeout(
      () => loggedOn || session.drop(`no Logon answer within ${options.connectTimeoutMs} ms`),
      options.connectTimeoutMs,
    );
    let failure: unknown = null;
    try {
      failure = (await Promise.race([session.run(transport).then(() => undefined), ended])) ?? null;
    } catch (error) {
      failure = error;
    } finally {
      clearInterval(renew);
      clearTimeout(logonDeadline);
      if (close !== null) clearTimeout(close);
      this.#session = null;
      socket.destroy();
      await session.settled();
    }
    // What the partner said, when it ended the session, says more than how the connection ended.
    const closed = loggedOn ? 'the gateway closed the connection' : 'the gateway closed the connection without answering the Logon';
    const why =
      failure === null
        ? null
        : closedByGateway && !(settings.tls && !loggedOn)
          ? closed
          : describeFailure(failure, settings.tls && !loggedOn);
    await this.#setState('disconnected', session.endReason ?? why);
    return { kind: 'ended', loggedOn };
  }

  async #lease(): Promise<boolean> {
    const now = this.#deps.clock.now().getTime();
    return this.#deps.transact((trx) => leaseSession(trx, this.#deps.partnerId, this.#deps.options.owner, now, this.#deps.options.leaseMs));
  }

  /** `lastError` undefined keeps the one recorded: a reconnect attempt still shows why the last one failed. */
  async #setState(state: FixSessionState, lastError: string | null | undefined, loggedOn = false): Promise<void> {
    this.#state = state;
    await this.#deps.transact((trx) =>
      setSessionState(trx, this.#deps.partnerId, state, this.#deps.clock.now().getTime(), { lastError, loggedOn }),
    );
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    }).finally(() => {
      this.#wake = null;
    });
  }
}

import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { findPartner } from '../../partners/partner.repository.js';
import type { Transact } from '../../storage/database.js';
import type { ApplyToOrders } from '../connector.js';
import type { Database } from '../../storage/schema.js';
import type { FixCredentialSealer } from './credentials.js';
import { FixConnector } from './fix-connector.js';
import type { RefusedReason } from './inbound-check.js';
import { FixMetrics } from './fix-metrics.js';
import { FixSessionRunner, type PartnerFixConfig, type RunnerOptions } from './session-runner.js';
import { parseFixSettings } from '../../partners/fix-settings.js';

export interface FixEngineOptions extends RunnerOptions {
  /** Run partners' FIX sessions in this process (processes with workers); otherwise only read their logs. */
  readonly runSessions: boolean;
  readonly answerTimeoutMs: number;
  /** Runs each time a partner's session logs on in this process. */
  readonly onLoggedOn?: (partnerId: string) => Promise<void>;
  /** Applies the partners' reports to their orders in the transaction that records them (the router's). */
  readonly applyToOrders?: ApplyToOrders;
}

/**
 * The FIX connectors of one process: one FixConnector per partner, and, where sessions run, one
 * FixSessionRunner per partner keeping its session up. The composition root starts the sessions of
 * every partner whose connector is `fix` and stops them on shutdown.
 */
export class FixEngine {
  readonly #connectors = new Map<string, FixConnector>();
  readonly #runners = new Map<string, FixSessionRunner>();
  /** Partners' messages not applied since this process started, by partner and reason. */
  readonly #refused = new Map<string, Map<RefusedReason, number>>();
  #closed = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly transact: Transact,
    private readonly clock: Clock,
    private readonly sealer: FixCredentialSealer,
    private readonly options: FixEngineOptions,
    private readonly log: FastifyBaseLogger,
    /** The sessions' counters, which the composition root registers on /metrics. */
    readonly metrics: FixMetrics = new FixMetrics(),
  ) {}

  /** A partner's settings and opened credentials and TLS material, as stored now; null without settings. */
  async loadPartner(partnerId: string): Promise<PartnerFixConfig | null> {
    const row = await findPartner(this.db, partnerId);
    if (row === undefined || row.fix === null) return null;
    return {
      settings: parseFixSettings(row.fix),
      credentials: row.fix_credentials === null ? null : this.sealer.open(partnerId, row.fix_credentials),
      tls: row.fix_tls === null ? null : this.sealer.openTls(partnerId, row.fix_tls),
    };
  }

  /** The connector of a partner (the registry's factory for `fix`); starts its session where sessions run. */
  connector(partnerId: string): FixConnector {
    const existing = this.#connectors.get(partnerId);
    if (existing !== undefined) return existing;
    let connector: FixConnector | undefined;
    const onLoggedOn = this.options.onLoggedOn;
    const runner =
      this.options.runSessions && !this.#closed
        ? new FixSessionRunner({
            partnerId,
            db: this.db,
            transact: this.transact,
            clock: this.clock,
            log: this.log,
            loadPartner: () => this.loadPartner(partnerId),
            applyInbound: (trx, message) => (connector as FixConnector).applyInbound(trx, message),
            onRefused: (reason) => this.#countRefused(partnerId, reason),
            ...(onLoggedOn === undefined ? {} : { onLoggedOn: () => onLoggedOn(partnerId) }),
            options: this.options,
            counters: this.metrics.forPartner(partnerId),
          })
        : null;
    connector = new FixConnector(
      {
        partnerId,
        db: this.db,
        clock: this.clock,
        log: this.log,
        loadPartner: () => this.loadPartner(partnerId),
        answerTimeoutMs: this.options.answerTimeoutMs,
        onRefused: (reason) => this.#countRefused(partnerId, reason),
        ...(this.options.applyToOrders === undefined ? {} : { applyToOrders: this.options.applyToOrders }),
      },
      runner,
    );
    this.#connectors.set(partnerId, connector);
    if (runner !== null) {
      this.#runners.set(partnerId, runner);
      runner.start();
    }
    return connector;
  }

  /** The runner of a partner's session in this process, if it runs here. */
  runner(partnerId: string): FixSessionRunner | undefined {
    return this.#runners.get(partnerId);
  }

  /** The sessions this process keeps up, for metrics. */
  sessions(): { partnerId: string; loggedOn: boolean }[] {
    return [...this.#runners.entries()].map(([partnerId, runner]) => ({ partnerId, loggedOn: runner.session !== null }));
  }

  #countRefused(partnerId: string, reason: RefusedReason): void {
    const counts = this.#refused.get(partnerId) ?? new Map<RefusedReason, number>();
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
    this.#refused.set(partnerId, counts);
  }

  /**
   * The partners' messages this process did not apply, for metrics: every reason of every session
   * it keeps up (zero included), and of any other partner that had one.
   */
  refusedMessages(): { partnerId: string; reason: RefusedReason; count: number }[] {
    const partners = new Set([...this.#runners.keys(), ...this.#refused.keys()]);
    return [...partners].flatMap((partnerId) =>
      (['garbled', 'session_reject', 'unknown_order'] as const).map((reason) => ({
        partnerId,
        reason,
        count: this.#refused.get(partnerId)?.get(reason) ?? 0,
      })),
    );
  }

  /** Logs every FIX session out and stops reconnecting. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#runners.values()].map((runner) => runner.stop()));
  }
}

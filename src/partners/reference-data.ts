import type { Kysely } from 'kysely';
import { accountRuleOf, type PartnerAccountRule } from './core/account-rule.js';
import { parseFixSettings } from './fix-settings.js';
import type { Clock } from '../lib/clock.js';
import type { Database } from '../storage/schema.js';
import { parsePartnerChecks, type PartnerChecks } from './core/checks.js';
import { parseDecimalRate, type Rational } from './core/decimal-rate.js';
import { listFxRates } from './fx-rate.repository.js';
import type { InstrumentRow } from './instrument.table.js';
import type { Capability, Currency, Exchange, Jurisdiction } from './markets.js';
import { CURRENCY_OF_EXCHANGE } from './markets.js';
import type { PartnerStatus } from './partner.table.js';

export interface ReferencePartner {
  readonly id: string;
  readonly status: PartnerStatus;
  readonly jurisdiction: Jurisdiction;
  readonly capabilities: readonly Capability[];
  readonly connector: string;
  /** Whether its orders need the investor's account number, and its default account. */
  readonly account: PartnerAccountRule;
  /** The checks the partner asks for (its import file's `checks`). */
  readonly checks: PartnerChecks;
}

export interface ReferenceInstrument extends Readonly<InstrumentRow> {
  readonly exchange: Exchange;
  readonly class: Capability;
  readonly currency: Currency;
}

/** The reference data as one process last read it. */
export interface ReferenceSnapshot {
  partner(id: string): ReferencePartner | undefined;
  instrument(code: string): ReferenceInstrument | undefined;
  /**
   * FCFA per unit of `currency` on the UTC day `day` (YYYY-MM-DD): 1 for XOF and XAF, which are at
   * par; the imported rate for another currency, or undefined when none was imported for that day.
   * Every imported day is kept: an amend counts an order of any age at the rate of the day it was placed.
   */
  fcfaRate(currency: Currency, day: string): Rational | undefined;
}

const PAR: Rational = Object.freeze({ num: 1n, den: 1n });

interface Loaded {
  readonly view: ReferenceSnapshot;
  /** The invalidation generation it was read under. */
  readonly generation: number;
  readonly loadedAt: number;
}

export interface ReferenceDataOptions {
  /** A snapshot is never served past this age; from half of it, it is read again in the background. */
  readonly refreshMs: number;
  /** Told when a background read fails; the previous snapshot keeps serving until it reaches `refreshMs`. */
  readonly onRefreshError?: (error: unknown) => void;
}

async function read(db: Kysely<Database>): Promise<ReferenceSnapshot> {
  const [partnerRows, instrumentRows, rateRows] = await Promise.all([
    db.selectFrom('partners').select(['id', 'status', 'jurisdiction', 'capabilities', 'connector', 'fix', 'checks']).execute(),
    db.selectFrom('instruments').selectAll().execute(),
    // Every day's rate (one row a day per currency): an open order placed months ago counts at the
    // rate of its own day when it is amended.
    listFxRates(db),
  ]);
  const partners = new Map<string, ReferencePartner>();
  for (const p of partnerRows) {
    const checks = Object.freeze(parsePartnerChecks(p.checks));
    const account = Object.freeze(accountRuleOf({ checks, defaultAccount: p.fix === null ? null : parseFixSettings(p.fix).account }));
    partners.set(
      p.id,
      Object.freeze({
        id: p.id,
        status: p.status,
        jurisdiction: p.jurisdiction as Jurisdiction,
        capabilities: Object.freeze(JSON.parse(p.capabilities) as Capability[]),
        connector: p.connector,
        account,
        checks,
      }),
    );
  }
  const instruments = new Map<string, ReferenceInstrument>();
  for (const i of instrumentRows) {
    const exchange = i.exchange as Exchange;
    instruments.set(i.code, Object.freeze({ ...i, exchange, class: i.class as Capability, currency: CURRENCY_OF_EXCHANGE[exchange] }));
  }
  const rates = new Map<string, Rational>();
  for (const r of rateRows) {
    const rate = parseDecimalRate(r.rate);
    if (rate !== null) rates.set(`${r.currency}:${r.day}`, rate);
  }
  return {
    partner: (id) => partners.get(id),
    instrument: (code) => instruments.get(code),
    fcfaRate: (currency, day) => (currency === 'XOF' || currency === 'XAF' ? PAR : rates.get(`${currency}:${day}`)),
  };
}

/**
 * Partners, instruments and reference rates, read whole and kept in memory, so that placing an order
 * reads none of them from the database. Within the process `invalidate()` (called after an import)
 * makes the next `current()` wait for a fresh read. Another process's import (the `cauri` command) is
 * seen at most `refreshMs` later: a snapshot is never served past that age (the caller waits for a
 * fresh read, as after a quiet spell); from half that age it keeps serving while one read runs in the
 * background, so that a busy process does not wait.
 */
export class ReferenceData {
  #loaded: Loaded | null = null;
  #inflight: { generation: number; promise: Promise<Loaded> } | null = null;
  #generation = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly options: ReferenceDataOptions,
  ) {}

  async current(): Promise<ReferenceSnapshot> {
    const loaded = this.#loaded;
    if (loaded === null || loaded.generation !== this.#generation) return (await this.#load()).view;
    const age = this.clock.now().getTime() - loaded.loadedAt;
    // Never older than refreshMs: past it (a process left idle), the caller waits for a fresh read.
    if (age >= this.options.refreshMs) return (await this.#load()).view;
    // Past half of it, a busy process reads again in the background, so that it rarely has to wait.
    if (age >= this.options.refreshMs / 2) this.#load().catch((error: unknown) => this.options.onRefreshError?.(error));
    return loaded.view;
  }

  /** Forgets the snapshot: the next `current()` reads the database again. */
  invalidate(): void {
    this.#generation++;
  }

  /** One read at a time per generation; a read that started before an invalidation is not reused after it. */
  #load(): Promise<Loaded> {
    const generation = this.#generation;
    if (this.#inflight !== null && this.#inflight.generation === generation) return this.#inflight.promise;
    const loadedAt = this.clock.now().getTime();
    const promise = read(this.db).then((view) => {
      const loaded: Loaded = { view, generation, loadedAt };
      if (this.#loaded === null || this.#loaded.generation <= generation) this.#loaded = loaded;
      return loaded;
    });
    const inflight = { generation, promise };
    this.#inflight = inflight;
    const clear = () => {
      if (this.#inflight === inflight) this.#inflight = null;
    };
    promise.then(clear, clear);
    return promise;
  }
}

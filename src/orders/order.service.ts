import type { Kysely } from 'kysely';
import { accountOfOrder } from '../accounts/account.service.js';
import { utcDay, type Clock } from '../lib/clock.js';
import { notFound, validationError, type ErrorDetail } from '../lib/errors.js';
import { isId, newId, type ClientId } from '../lib/ids.js';
import { findClientAttestation, findClientAttestationShared } from '../kyc/attestation.repository.js';
import type { KycLevel } from '../kyc/levels.js';
import { JURISDICTION_OF_EXCHANGE, exchangeOfInstrument, type Exchange } from '../partners/markets.js';
import type { ReferenceData, ReferenceInstrument } from '../partners/reference-data.js';
import type { ConnectorNames as ConnectorRegistry } from './ports.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { attestationRefusal } from './core/attestation-rules.js';
import { capCents } from './core/caps.js';
import { checkExpireDate, expiryInstant } from './core/lifecycle.js';
import { checkTradingRules } from './core/price-rules.js';
import type { TradingDays } from './core/trading-days.js';
import { fillOf } from './fill.js';
import { settlementDate } from './core/settlement.js';
import { frozenTimeOf } from '../testclocks/test-clock.repository.js';
import { toOrder } from './order.mapping.js';
import { checkNewOrderCap, heldThisMonth } from './monthly-cap.js';
import { findClientOrder, findClientOrderForUpdate, listClientOrders, listFills, type OrderFilter } from './order.repository.js';
import type { AmendRequest, Fill, Order, OrderRequest } from './order.schemas.js';
import type { OrderRow } from './order.table.js';
import { recordAmendRequest, recordCancelRequest } from './order-requests.js';

import { checkMetadata } from './core/metadata.js';

export { checkMetadata, METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from './core/metadata.js';

export interface OrderPage {
  items: Order[];
  /** Id to continue from towards older orders, or null on the last page. */
  older: string | null;
  /** Id to go back from towards newer orders, or null on the first page. */
  newer: string | null;
}

/** An order that passed every check, not yet stored, and the instrument it was checked against. */
export interface NewOrder {
  row: OrderRow;
  instrument: ReferenceInstrument;
}

export interface OrderServiceOptions {
  livemode: boolean;
  dialect: DialectName;
  firstHandOverGraceMs: number;
  /** Open days from trade date to settlement, per exchange. */
  settlementDays: (exchange: Exchange) => number;
}

/** The time of a client's sandbox test clock (see testclocks/); undefined when the client has no such clock. */
export type TestClockTime = (db: Kysely<Database>, clientId: ClientId, id: string) => Promise<number | undefined>;

/** The exchanges' calendars as the process holds them now (they are reloaded after an import). */
export interface CalendarSource {
  current(): TradingDays;
}

/**
 * Checks orders (every check of docs/concepts.md, "Checks") and fixes on each the investor's account
 * at its partner, records cancel and amend requests, and serves orders back. The use cases
 * (orders/use-cases/) store what it checked and hand it to the partner through the router. Partners,
 * instruments and rates come from the process's reference data, and the calendars from memory (no
 * read per order).
 */
export class OrderService {
  constructor(
    private readonly connectors: ConnectorRegistry,
    private readonly reference: ReferenceData,
    private readonly clock: Clock,
    /** The exchanges' calendars: when day and gtd orders expire, and settlement dates. */
    private readonly calendars: CalendarSource,
    private readonly options: OrderServiceOptions,
    /** Sandbox only: test clocks, which orders may live on. */
    private readonly testClockTime?: TestClockTime,
  ) {}

  /**
   * Checks an order request in the caller's transaction and returns the row to store (status
   * `created`) with the instrument it was checked against. Each failed check is a 422 naming its
   * field and rule; the cap check runs under a per-subject lock (held until the caller's transaction
   * ends) so that concurrent orders cannot together exceed the cap. Writes nothing.
   */
  async prepare(trx: Kysely<Database>, clientId: ClientId, request: OrderRequest): Promise<NewOrder> {
    const details = checkMetadata(request.client_metadata);
    const reference = await this.reference.current();
    const partner = isId('partner', request.rcpt_to) ? reference.partner(request.rcpt_to) : undefined;
    if (partner === undefined) details.push({ field: 'rcpt_to', rule: 'exists', value: request.rcpt_to, message: 'no such SGI partner' });
    else if (partner.status !== 'approved')
      details.push({ field: 'rcpt_to', rule: 'approved', value: request.rcpt_to, message: `partner is ${partner.status}, not approved` });
    else if (!this.connectors.has(partner.connector))
      details.push({
        field: 'rcpt_to',
        rule: 'connector',
        value: request.rcpt_to,
        message: `partner's connector ${partner.connector} is not available here`,
      });

    const attestation = isId('attestation', request.kyc_attestation_id)
      ? await findClientAttestationShared(trx, this.options.dialect, clientId, request.kyc_attestation_id)
      : undefined;
    const now = this.clock.now().getTime();
    const refusal = attestationRefusal(attestation, request.kyc_attestation_id, now);
    if (refusal !== null) details.push(refusal);
    else if (
      attestation !== undefined &&
      partner !== undefined &&
      !(JSON.parse(attestation.jurisdictions) as string[]).includes(partner.jurisdiction)
    ) {
      details.push({
        field: 'kyc_attestation_id',
        rule: 'jurisdiction',
        value: partner.jurisdiction,
        message: `attestation does not cover ${partner.jurisdiction}, the partner's jurisdiction`,
      });
    }

    // The investor's account at the partner, fixed on the order now (partners/core/account-rule.ts).
    // Its read goes out with the cap's lock and read below (one round trip on PostgreSQL).
    const accountRead =
      partner?.status === 'approved' && attestation !== undefined
        ? accountOfOrder(trx, clientId, attestation.subject_id, partner)
        : undefined;
    accountRead?.catch(() => undefined);
    const instrumentOfRequest = reference.instrument(request.instrument);
    const capRead =
      attestation !== undefined &&
      request.side === 'buy' &&
      instrumentOfRequest !== undefined &&
      capCents(attestation.level as KycLevel) !== null
        ? heldThisMonth(trx, this.options.dialect, reference, {
            clientId,
            subjectId: attestation.subject_id,
            monthOf: now,
            instrument: request.instrument,
          })
        : undefined;
    capRead?.catch(() => undefined);
    let account: string | null = null;
    if (accountRead !== undefined) {
      const chosen = await accountRead;
      if ('rule' in chosen) details.push(chosen);
      else account = chosen.account;
    }

    // An order on a test clock takes the clock's time for its session and expiry; real time for the rest.
    const clockTime = await this.#testClock(trx, clientId, request.test_clock, details);
    const marketNow = clockTime ?? now;
    const timeInForce = request.time_in_force ?? 'day';
    const expireDate = checkExpireDate(timeInForce, request.expire_date, marketNow);
    if (expireDate !== null) details.push(expireDate);

    const instrument = reference.instrument(request.instrument);
    if (instrument === undefined)
      details.push({ field: 'instrument', rule: 'exists', value: request.instrument, message: 'no such instrument in the catalogue' });
    else {
      if (partner !== undefined) {
        if (JURISDICTION_OF_EXCHANGE[instrument.exchange] !== partner.jurisdiction) {
          details.push({
            field: 'instrument',
            rule: 'partner_jurisdiction',
            value: request.instrument,
            message: `${instrument.exchange} is outside the partner's jurisdiction ${partner.jurisdiction}`,
          });
        } else if (!partner.capabilities.includes(instrument.class)) {
          details.push({
            field: 'instrument',
            rule: 'partner_capability',
            value: request.instrument,
            message: `the partner does not trade ${instrument.class}`,
          });
        }
      }
      details.push(...checkTradingRules(instrument, request));
    }
    // The cap's read is awaited before any refusal, so that none of its statements outlives the transaction.
    const held =
      capRead === undefined
        ? undefined
        : await capRead.then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          );
    if (details.length > 0 || partner === undefined || attestation === undefined || instrument === undefined)
      throw validationError(details);

    const level = attestation.level as KycLevel;
    if (held !== undefined) {
      if ('error' in held) throw held.error;
      checkNewOrderCap({ level, request, instrument, reference, now, used: held.value });
    }

    const expiresAt = expiryInstant(this.calendars.current(), instrument.exchange, timeInForce, request.expire_date ?? null, marketNow);
    const row: OrderRow = {
      id: newId('order', now),
      client_id: clientId,
      status: 'created',
      rcpt_to: partner.id,
      kyc_attestation_id: attestation.id,
      kyc_attestation_sha256: attestation.document_sha256,
      subject_id: attestation.subject_id,
      kyc_level: level,
      instrument: instrument.code,
      side: request.side,
      qty: request.qty,
      limit_price_cents: request.limit_price_cents ?? null,
      reference_price_cents: instrument.reference_price_cents,
      filled_qty: 0,
      fill_notional_cents: '0',
      failure_reason: null,
      client_metadata: request.client_metadata === undefined ? null : JSON.stringify(request.client_metadata),
      connector: request.test_clock === undefined ? partner.connector : `${partner.connector}@${request.test_clock}`,
      test_clock_id: request.test_clock ?? null,
      last_report_seq: 0,
      route_attempts: 0,
      // The request hands the order over itself; the router steps in after this grace if it could not.
      next_route_at: now + this.options.firstHandOverGraceMs,
      route_lease_until: null,
      cancel_requested_at: null,
      created_at: now,
      updated_at: now,
      time_in_force: timeInForce,
      expire_date: request.expire_date ?? null,
      expires_at: expiresAt,
      expiry_due_at: expiresAt,
      cancel_reason: null,
      pending_request: null,
      pending_request_id: null,
      cancel_request_reason: null,
      amend_qty: null,
      amend_limit_price_cents: null,
      requests_made: 0,
      last_refusal: null,
      account,
    };
    return { row, instrument };
  }

  async #testClock(trx: Kysely<Database>, clientId: ClientId, id: string | undefined, details: ErrorDetail[]): Promise<number | null> {
    if (id === undefined) return null;
    if (this.options.livemode || this.testClockTime === undefined) {
      details.push({ field: 'test_clock', rule: 'sandbox_only', value: id, message: 'test clocks exist in sandbox deployments only' });
      return null;
    }
    const time = await this.testClockTime(trx, clientId, id);
    if (time === undefined) details.push({ field: 'test_clock', rule: 'exists', value: id, message: 'no such test clock of this client' });
    return time ?? null;
  }

  /** The client's order, or 404; `locked`: its row locked until the caller's transaction ends. */
  async #find(db: Kysely<Database>, clientId: ClientId, id: string, locked = false): Promise<OrderRow> {
    const read = () => (locked ? findClientOrderForUpdate(db, this.options.dialect, clientId, id) : findClientOrder(db, clientId, id));
    const row = isId('order', id) ? await read() : undefined;
    if (row === undefined) throw notFound('Order', id);
    return row;
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<Order> {
    return toOrder(await this.#find(db, clientId, id));
  }

  async list(
    db: Kysely<Database>,
    clientId: ClientId,
    filter: OrderFilter,
    page: { limit: number; before?: string; after?: string },
  ): Promise<OrderPage> {
    let query = filter;
    if (filter.kyc_attestation_id !== undefined) {
      // Orders of one attestation are read among its subject's (an index); an attestation this client
      // was not issued has no orders of the client.
      const attestation = isId('attestation', filter.kyc_attestation_id)
        ? await findClientAttestation(db, clientId, filter.kyc_attestation_id)
        : undefined;
      if (attestation === undefined) return { items: [], older: null, newer: null };
      query = { ...filter, subjectId: attestation.subject_id };
    }
    const rows = await listClientOrders(db, clientId, query, page);
    const more = rows.length > page.limit;
    const slice = rows.slice(0, page.limit);
    if (page.after !== undefined) {
      // Fetched oldest first towards newer orders; shown newest first like every page.
      slice.reverse();
      return { items: slice.map(toOrder), older: slice.at(-1)?.id ?? null, newer: more ? (slice[0]?.id ?? null) : null };
    }
    return {
      items: slice.map(toOrder),
      older: more ? (slice.at(-1)?.id ?? null) : null,
      newer: page.before !== undefined ? (slice[0]?.id ?? null) : null,
    };
  }

  /**
   * Records a cancel request in the caller's transaction: a final order is 409 `conflict`; otherwise
   * the order shows `pending_request: pending_cancel` (replacing an amend still waiting) until the
   * router has the partner's answer. Asking again while a cancel waits changes nothing.
   */
  async requestCancel(trx: Kysely<Database>, clientId: ClientId, id: string): Promise<OrderRow> {
    return recordCancelRequest(trx, await this.#find(trx, clientId, id, true), this.clock.now().getTime());
  }

  /**
   * Records an amend request in the caller's transaction. 409 `conflict` unless the order is a limit
   * order, routed or partially filled, with no other request waiting; 422 when the order's attestation
   * is revoked or expired (`not_revoked`, `not_expired`, as for a new order), when the new values change
   * nothing, do not stay above the filled quantity (`above_filled`), break the instrument's rules as
   * a new order's would (`lot_size`, `tick_size`, `price_band`: the values the amend sends, against
   * the instrument's rules and reference price now), or take the subject over its monthly cap
   * (`monthly_cap`: the increase counts, in FCFA at the order's rate of the day it was placed, in the
   * month it was placed, under the same per-subject lock as a new order; `fx_rate` without that
   * rate). The order then shows `pending_request: pending_amend` and the values asked for.
   */
  async requestAmend(trx: Kysely<Database>, clientId: ClientId, id: string, change: AmendRequest): Promise<OrderRow> {
    const row = await this.#find(trx, clientId, id, true);
    return recordAmendRequest(trx, row, change, {
      reference: await this.reference.current(),
      dialect: this.options.dialect,
      now: () => this.clock.now().getTime(),
    });
  }

  /** The order's fills, oldest first, with their amounts, settlement dates and statuses. */
  async fills(db: Kysely<Database>, clientId: ClientId, id: string): Promise<Fill[]> {
    return (await this.orderWithFills(db, clientId, id)).fills;
  }

  /**
   * The order (404 when it is not this client's) and its fills. Settlement statuses are those of
   * today: the service's date, or the order's test clock's date for an order on one.
   */
  async orderWithFills(db: Kysely<Database>, clientId: ClientId, id: string): Promise<{ row: OrderRow; fills: Fill[] }> {
    const row = await this.#find(db, clientId, id);
    const exchange = exchangeOfInstrument(row.instrument);
    const days = this.options.settlementDays(exchange);
    const calendar = this.calendars.current();
    const clockTime = row.test_clock_id === null || row.test_clock_id === undefined ? undefined : await frozenTimeOf(db, row.test_clock_id);
    const today = utcDay(clockTime ?? this.clock.now().getTime());
    const fills = (await listFills(db, row.id)).map((fill) =>
      fillOf(fill, row.side, (tradeDate) => settlementDate(calendar, exchange, tradeDate, days), today),
    );
    return { row, fills };
  }
}

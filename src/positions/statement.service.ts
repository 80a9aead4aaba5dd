import type { Kysely } from 'kysely';
import { recordEvent } from '../events/event.service.js';
import type { Clock } from '../lib/clock.js';
import { isoMillis, utcDay } from '../lib/clock.js';
import { notFound, validationError, type ErrorDetail } from '../lib/errors.js';
import { isId, newId, type ClientId } from '../lib/ids.js';
import { JURISDICTION_OF_EXCHANGE } from '../partners/markets.js';
import type { ReferenceData } from '../partners/reference-data.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { applyTrade, declared, FLAT, type PositionAmounts } from './core/average-cost.js';
import { breaksOf } from './core/breaks.js';
import { addUnsettled, serialiseUnsettled, SETTLEMENT_HORIZON_DAYS, shiftDate, type UnsettledEntry } from './core/settlement.js';
import {
  bookFills,
  breaksOfStatements,
  findClientStatement,
  insertStatement,
  listStatements,
  lockBook,
  replaceBookPositions,
  statementBefore,
  updateBook,
  type BookFill,
  type BookKey,
} from './position.repository.js';
import type { Holding, PositionBreakEvent, Statement, StatementRequest } from './position.schemas.js';
import { storedAmounts, type PositionService } from './position.service.js';
import type { PositionBreakTable, PositionStatementTable, PositionTable } from './position.table.js';

export interface StatementPage {
  items: Statement[];
  /** The id of the last statement when another page follows, else null. */
  next: string | null;
}

/** Instants of the start of a UTC day. */
const dayStart = (date: string) => Date.parse(`${date}T00:00:00.000Z`);

/**
 * Statements of holdings declared by clients from their SGI (docs/positions.md, "Statements and
 * breaks"). A statement gives the subject's settled holdings at the partner at the end of its date:
 *
 * 1. It is compared with what the service's records give for that date (the previous statement plus
 *    the fills settled since, or every fill settled by then before the first statement); each
 *    instrument that differs is a break, stored with the statement and emitted as `position.break`.
 * 2. It becomes the start of the subject's positions at the partner: each position is its line of
 *    the statement (none: 0) plus the fills that settle after its date, in the order they executed.
 *    Realised profit and loss starts again from it.
 *
 * A statement of the same date as the latest corrects it (it is compared with the same previous
 * statement); one dated before the latest is refused. Everything happens in the caller's
 * transaction, under the book's lock, so that no fill is applied meanwhile.
 */
export class StatementService {
  constructor(
    private readonly positions: PositionService,
    private readonly reference: ReferenceData,
    private readonly clock: Clock,
    private readonly options: { dialect: DialectName; livemode: boolean },
  ) {}

  async declare(trx: Kysely<Database>, clientId: ClientId, request: StatementRequest): Promise<Statement> {
    const now = this.clock.now().getTime();
    await this.#check(request, now);
    const key: BookKey = { client_id: clientId, subject_id: request.subject_id, rcpt_to: request.rcpt_to };
    const { book } = await lockBook(trx, this.options.dialect, key, now);
    if (book.statement_as_of !== null && request.as_of < book.statement_as_of) {
      throw validationError([
        {
          field: 'as_of',
          rule: 'not_before_latest',
          value: request.as_of,
          latest_as_of: book.statement_as_of,
          message: `the subject's latest statement at this partner is of ${book.statement_as_of}; a statement may correct it (same date) or follow it, not precede it`,
        },
      ]);
    }
    const previous = await statementBefore(trx, key, request.as_of);
    // A fill settles within the horizon of its trade date: older fills settled by the previous date.
    const fills = await bookFills(trx, key, previous === undefined ? null : dayStart(shiftDate(previous.as_of, -SETTLEMENT_HORIZON_DAYS)));
    const settled = fills.map((fill) => ({ fill, settles: this.positions.settlementDate(fill.instrument, utcDay(fill.executed_at)) }));

    const expected = new Map<string, number>();
    for (const h of previous === undefined ? [] : (JSON.parse(previous.holdings) as Holding[])) expected.set(h.instrument, h.qty);
    for (const { fill, settles } of settled) {
      if ((previous === undefined || settles > previous.as_of) && settles <= request.as_of) {
        expected.set(fill.instrument, (expected.get(fill.instrument) ?? 0) + signed(fill));
      }
    }
    const breaks = breaksOf(new Map(request.holdings.map((h) => [h.instrument, h.qty])), expected);

    const id = newId('statement', now);
    const positions = rebuild(
      request,
      settled.filter((s) => s.settles > request.as_of).map((s) => s.fill),
    );
    await replaceBookPositions(
      trx,
      key,
      [...positions].map(
        ([instrument, p]) =>
          ({
            ...key,
            instrument,
            ...storedAmounts(p.amounts),
            unsettled: serialiseUnsettled(p.unsettled),
            statement_as_of: request.as_of,
            updated_at: now,
          }) satisfies PositionTable,
      ),
    );
    await updateBook(trx, key, { statement_id: id, statement_as_of: request.as_of, updated_at: now });
    const row: PositionStatementTable = {
      id,
      client_id: clientId,
      subject_id: request.subject_id,
      rcpt_to: request.rcpt_to,
      as_of: request.as_of,
      holdings: JSON.stringify(request.holdings),
      previous_statement_id: previous?.id ?? null,
      replaces: book.statement_as_of === request.as_of ? book.statement_id : null,
      replaced_by: null,
      created_at: now,
    };
    const breakRows: PositionBreakTable[] = breaks.map((b) => ({
      statement_id: id,
      client_id: clientId,
      subject_id: request.subject_id,
      rcpt_to: request.rcpt_to,
      ...b,
    }));
    await insertStatement(trx, row, breakRows);
    if (breaks.length > 0) {
      const data: PositionBreakEvent = {
        statement_id: id,
        subject_id: row.subject_id,
        rcpt_to: row.rcpt_to,
        as_of: row.as_of,
        previous_statement_id: row.previous_statement_id,
        breaks,
      };
      await recordEvent(trx, {
        clientId,
        type: 'position.break',
        data,
        livemode: this.options.livemode,
        at: new Date(now),
        subjectRef: id,
      });
    }
    return toStatement(row, breakRows);
  }

  /**
   * What the schema cannot check, before anything is read or written: the partner exists, the date
   * is not in the future (UTC, on the service's clock), and each line names a distinct instrument of
   * the catalogue traded in the partner's jurisdiction. Every failure is one detail of a 422.
   */
  async #check(request: StatementRequest, now: number): Promise<void> {
    const reference = await this.reference.current();
    const details: ErrorDetail[] = [];
    const partner = isId('partner', request.rcpt_to) ? reference.partner(request.rcpt_to) : undefined;
    if (partner === undefined) details.push({ field: 'rcpt_to', rule: 'exists', value: request.rcpt_to, message: 'no such SGI partner' });
    const today = utcDay(now);
    if (request.as_of > today)
      details.push({
        field: 'as_of',
        rule: 'not_in_future',
        value: request.as_of,
        message: `the statement's date is after today (${today}, UTC)`,
      });
    const seen = new Map<string, number>();
    request.holdings.forEach((h, i) => {
      const field = `holdings.${i}.instrument`;
      const instrument = reference.instrument(h.instrument);
      if (instrument === undefined)
        details.push({ field, rule: 'exists', value: h.instrument, message: 'no such instrument in the catalogue' });
      else if (partner !== undefined && JURISDICTION_OF_EXCHANGE[instrument.exchange] !== partner.jurisdiction) {
        details.push({
          field,
          rule: 'partner_jurisdiction',
          value: h.instrument,
          message: `${instrument.exchange} is outside the partner's jurisdiction ${partner.jurisdiction}`,
        });
      }
      const first = seen.get(h.instrument);
      if (first !== undefined)
        details.push({ field, rule: 'unique', value: h.instrument, message: `the same instrument as holdings.${first}` });
      else seen.set(h.instrument, i);
    });
    if (details.length > 0) throw validationError(details);
  }

  async get(db: Kysely<Database>, clientId: ClientId, id: string): Promise<Statement> {
    const row = isId('statement', id) ? await findClientStatement(db, clientId, id) : undefined;
    if (row === undefined) throw notFound('Statement', id);
    return toStatement(row, (await breaksOfStatements(db, [row.id])).get(row.id) ?? []);
  }

  async list(
    db: Kysely<Database>,
    clientId: ClientId,
    filter: { subject_id?: string; rcpt_to?: string },
    page: { limit: number; before?: string },
  ): Promise<StatementPage> {
    const rows = await listStatements(db, clientId, filter, page);
    const slice = rows.slice(0, page.limit);
    const breaks = await breaksOfStatements(
      db,
      slice.map((r) => r.id),
    );
    return {
      items: slice.map((r) => toStatement(r, breaks.get(r.id) ?? [])),
      next: rows.length > page.limit ? (slice.at(-1)?.id ?? null) : null,
    };
  }
}

const signed = (fill: BookFill) => (fill.side === 'buy' ? fill.fill_qty : -fill.fill_qty);

/** The positions a statement starts: its lines, then the fills settling after its date, in execution order. */
function rebuild(
  request: StatementRequest,
  fills: readonly BookFill[],
): Map<string, { amounts: PositionAmounts; unsettled: UnsettledEntry[] }> {
  const out = new Map<string, { amounts: PositionAmounts; unsettled: UnsettledEntry[] }>();
  for (const h of request.holdings) out.set(h.instrument, { amounts: declared(h.qty, h.average_cost_cents), unsettled: [] });
  for (const fill of fills) {
    const p = out.get(fill.instrument) ?? { amounts: FLAT, unsettled: [] };
    p.amounts = applyTrade(p.amounts, { side: fill.side, qty: fill.fill_qty, price_cents: fill.fill_price_cents });
    p.unsettled = addUnsettled(p.unsettled, fill.test_clock_id, utcDay(fill.executed_at), signed(fill));
    out.set(fill.instrument, p);
  }
  return out;
}

function toStatement(row: PositionStatementTable, breaks: readonly PositionBreakTable[]): Statement {
  return {
    id: row.id,
    subject_id: row.subject_id,
    rcpt_to: row.rcpt_to,
    as_of: row.as_of,
    holdings: JSON.parse(row.holdings) as Holding[],
    breaks: breaks.map((b) => ({
      instrument: b.instrument,
      statement_qty: b.statement_qty,
      expected_qty: b.expected_qty,
      difference_qty: b.difference_qty,
    })),
    previous_statement_id: row.previous_statement_id,
    replaces: row.replaces,
    replaced_by: row.replaced_by,
    created_at: isoMillis(row.created_at),
  };
}

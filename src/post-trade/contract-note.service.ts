import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import type { ClientId } from '../lib/ids.js';
import type { OrderService } from '../orders/order.service.js';
import { findInstrument } from '../partners/instrument.repository.js';
import { JURISDICTION_OF_EXCHANGE, exchangeOfInstrument, type Jurisdiction } from '../partners/markets.js';
import { findPartner } from '../partners/partner.repository.js';
import type { Database } from '../storage/schema.js';
import { contractNoteOf } from './contract-note.js';
import { renderContractNotePdf } from './contract-note.pdf.js';
import type { ContractNote } from './contract-note.schemas.js';
import { CONTRACT_NOTE_TEXTS, defaultContractNoteLanguage, type ContractNoteLanguage } from './contract-note.texts.js';

/** Contract notes of a client's orders: the JSON note, and its PDF. */
export class ContractNoteService {
  constructor(
    private readonly orders: OrderService,
    private readonly clock: Clock,
    /** The service's name, printed as the note's producer. */
    private readonly issuer: string,
  ) {}

  /**
   * The note of one of the client's orders: 404 when the order is not the client's, 409 `conflict`
   * while it has no fill (a note confirms executions).
   */
  async note(db: Kysely<Database>, clientId: ClientId, id: string): Promise<ContractNote> {
    const { row, fills } = await this.orders.orderWithFills(db, clientId, id);
    if (fills.length === 0) throw new ApiError('conflict', `Order ${id} has no fills yet; its contract note exists once it has one`);
    const [partner, instrument] = await Promise.all([findPartner(db, row.rcpt_to), findInstrument(db, row.instrument)]);
    return contractNoteOf(
      row,
      fills,
      {
        partner: {
          id: row.rcpt_to,
          name: partner?.name ?? row.rcpt_to,
          jurisdiction:
            (partner?.jurisdiction as Jurisdiction | undefined) ?? JURISDICTION_OF_EXCHANGE[exchangeOfInstrument(row.instrument)],
        },
        instrument: { name: instrument?.name ?? null, isin: instrument?.isin ?? null },
      },
      this.clock.now().getTime(),
    );
  }

  /** The note as a PDF, in `language`, else in its partner's default (see defaultContractNoteLanguage). */
  async pdf(note: ContractNote, language?: ContractNoteLanguage): Promise<{ pdf: Buffer; language: ContractNoteLanguage }> {
    const chosen = language ?? defaultContractNoteLanguage(note.partner.jurisdiction);
    return { pdf: await renderContractNotePdf(note, CONTRACT_NOTE_TEXTS[chosen], this.issuer), language: chosen };
  }
}

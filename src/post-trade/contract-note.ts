import { isoMillis } from '../lib/clock.js';
import { jsonInteger } from '../orders/fill.js';
import { averageFillPrice } from '../orders/core/fills.js';
import type { Fill } from '../orders/order.schemas.js';
import type { OrderRow } from '../orders/order.table.js';
import { currencyOfInstrument, exchangeOfInstrument, type Jurisdiction } from '../partners/markets.js';
import { sumFees, type FeeType } from '../partners/core/fees.js';
import type { ContractNote } from './contract-note.schemas.js';

/**
 * The investor's account with the partner: the one fixed on the order when it was accepted (the
 * subject's registered account, else the partner's default), or null for an order that carried none.
 */
export function accountOf(row: OrderRow): string | null {
  return row.account ?? null;
}

export interface NoteParties {
  partner: { id: string; name: string; jurisdiction: Jurisdiction };
  instrument: { name: string | null; isin: string | null };
}

/**
 * The contract note of an order from its stored row and its fills (at least one). Pure: totals are
 * the sums of the fills' fixed amounts, in bigint.
 */
export function contractNoteOf(row: OrderRow, fills: readonly Fill[], parties: NoteParties, generatedAt: number): ContractNote {
  const first = fills[0];
  if (first === undefined) throw new RangeError('a contract note needs at least one fill');
  const gross = fills.reduce((sum, f) => sum + BigInt(f.gross_cents), 0n);
  const fees = sumFees(fills.map((f) => f.fees.map((x) => ({ type: x.type as FeeType, amount_cents: BigInt(x.amount_cents) }))));
  const feeTotal = fees.reduce((sum, f) => sum + f.amount_cents, 0n);
  const filled = fills.reduce((n, f) => n + f.qty, 0);
  const schedules = new Map<string, Fill['fee_schedules'][number]>();
  for (const f of fills) for (const s of f.fee_schedules) schedules.set(`${s.scope} ${s.id} ${s.effective_from}`, s);
  const settlement = fills.reduce((latest, f) => (f.settlement_date > latest ? f.settlement_date : latest), first.settlement_date);
  return {
    order_id: row.id,
    generated_at: isoMillis(generatedAt),
    partner: parties.partner,
    subject_id: row.subject_id,
    account: accountOf(row),
    kyc_attestation_id: row.kyc_attestation_id,
    instrument: {
      code: row.instrument,
      name: parties.instrument.name,
      isin: parties.instrument.isin,
      exchange: exchangeOfInstrument(row.instrument),
    },
    side: row.side,
    currency: currencyOfInstrument(row.instrument),
    order_qty: row.qty,
    limit_price_cents: row.limit_price_cents,
    order_status: row.status,
    order_created_at: isoMillis(Number(row.created_at)),
    filled_qty: filled,
    average_price_cents: averageFillPrice(gross, filled) as number,
    trade_date: first.executed_at.slice(0, 10),
    settlement_date: settlement,
    settlement_status: fills.every((f) => f.settlement_status === 'settled') ? 'settled' : 'pending',
    fills: [...fills],
    gross_cents: jsonInteger(gross),
    fees: fees.map((f) => ({ type: f.type, amount_cents: jsonInteger(f.amount_cents) })),
    fees_total_cents: jsonInteger(feeTotal),
    net_cents: jsonInteger(row.side === 'buy' ? gross + feeTotal : gross - feeTotal),
    fee_schedules: [...schedules.values()],
  };
}

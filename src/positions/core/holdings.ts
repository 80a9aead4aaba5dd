import type { ErrorDetail } from '../../lib/errors.js';

/**
 * The holdings check of partners that ask for it (pure): a sell may take at most what is available,
 * the position's quantity (what the statement declared held, plus what was bought, less what was sold
 * since) less the quantity still open on the subject's other sells of the instrument at that partner.
 * Returns the 422 detail (`qty`, rule `holdings`) when `needed` exceeds it, else null.
 */
export function holdingsShortfall(c: {
  qty: number;
  needed: number;
  held: bigint;
  pendingSells: bigint;
  instrument: string;
}): ErrorDetail | null {
  const available = c.held - c.pendingSells;
  if (BigInt(c.needed) <= available) return null;
  const shown = available < 0n ? 0n : available;
  return {
    field: 'qty',
    rule: 'holdings',
    value: c.qty,
    message: `the sell needs ${c.needed} ${c.instrument}; ${shown} available (${c.held} in the position, ${c.pendingSells} on other open sells)`,
    available_qty: Number(shown),
    position_qty: Number(c.held),
    pending_sell_qty: Number(c.pendingSells),
  };
}

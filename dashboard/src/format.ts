const grouped = new Intl.NumberFormat('fr-FR', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** An amount in hundredths of a currency (the order's), as `12 345,67 XOF`; a dash when absent. */
export function money(cents: number | null | undefined, currency = 'XOF'): string {
  return cents === null || cents === undefined ? '—' : `${grouped.format(cents / 100)} ${currency}`;
}

/** A date-time of the API as `2026-11-22 10:00:00 UTC` (the API speaks UTC only). */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

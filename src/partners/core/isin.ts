/**
 * ISO 6166 identifiers: two letters of the issuing country (ISO 3166-1), nine alphanumerics, one check
 * digit. The check digit is the Luhn digit (ISO/IEC 7812-1, annex B) of the first eleven characters
 * with every letter replaced by its value (A = 10 ... Z = 35), which catches any single mistyped
 * character and most swaps of neighbours.
 */
export const ISIN_PATTERN = '^[A-Z]{2}[A-Z0-9]{9}[0-9]$';

const SHAPE = new RegExp(ISIN_PATTERN);

/** The check digit the first eleven characters call for. Precondition: they match the pattern. */
export function isinCheckDigit(body: string): number {
  let digits = '';
  for (const c of body) digits += c >= 'A' ? String(c.charCodeAt(0) - 55) : c;
  let sum = 0;
  // Doubling starts at the rightmost digit, since the check digit will follow it.
  for (let i = digits.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isValidIsin(isin: string): boolean {
  return SHAPE.test(isin) && isinCheckDigit(isin.slice(0, 11)) === isin.charCodeAt(11) - 48;
}

/**
 * Exchange rates as exact fractions. A rate is written as a decimal string (`"55.4012"`), read as the
 * fraction 554012/10000 and never as a binary float, so that converting an amount gives the same
 * cents on every platform and for every amount.
 */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

/** Up to 9 digits before the point and 10 after; no sign, no exponent, no leading zeros. */
export const DECIMAL_RATE_PATTERN = '^(0|[1-9][0-9]{0,8})(\\.[0-9]{1,10})?$';

const SHAPE = new RegExp(DECIMAL_RATE_PATTERN);

/** The fraction a decimal string stands for, or null when it is malformed or not above zero. */
export function parseDecimalRate(text: string): Rational | null {
  if (!SHAPE.test(text)) return null;
  const [whole = '0', fraction = ''] = text.split('.');
  const num = BigInt(whole + fraction);
  if (num === 0n) return null;
  return { num, den: 10n ** BigInt(fraction.length) };
}

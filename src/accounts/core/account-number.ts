/**
 * An investor's account number at an SGI, as a client registers it. It is sent as it is in the
 * Account (1) field of every FIX order for the subject, so it is limited to what any FIX engine and
 * any log carries intact: 1 to 32 printable ASCII characters, without `|` (how FIX messages are
 * shown with their separators) or `=` (the tag separator), no control character (SOH, the field
 * delimiter, among them), and no space at either end (engines trim them). Spaces inside are kept.
 */
export const ACCOUNT_NUMBER_MAX_LENGTH = 32;

/** Printable ASCII without space, `=` (0x3d) and `|` (0x7c). */
const VISIBLE = '[\\x21-\\x3c\\x3e-\\x7b\\x7d\\x7e]';

export const ACCOUNT_NUMBER_PATTERN = `^${VISIBLE}(?:[ \\x21-\\x3c\\x3e-\\x7b\\x7d\\x7e]{0,${ACCOUNT_NUMBER_MAX_LENGTH - 2}}${VISIBLE})?$`;

const SHAPE = new RegExp(ACCOUNT_NUMBER_PATTERN, 'u');

export function isValidAccountNumber(value: string): boolean {
  return SHAPE.test(value);
}

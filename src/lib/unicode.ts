import type { ErrorDetail } from './errors.js';

// With the `u` flag a surrogate pair is one code point, so this class matches only a surrogate
// without its other half: what JSON's `\udfff` escapes can produce and Unicode text cannot hold.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;
/** A lone surrogate, or the character U+0000, which PostgreSQL's text cannot hold. */
const UNSTORABLE = /[\uD800-\uDFFF\u0000]/u;

/** Where a decoded JSON value holds a string that is not well-formed UTF-16. */
export interface LoneSurrogate {
  /** Member names and array indexes from the root to the string. */
  path: string[];
  /** The string is a member name (the last element of `path`) rather than a value. */
  memberName: boolean;
  text: string;
  /** Index of the first lone surrogate in `text`, in UTF-16 code units. */
  index: number;
}

/**
 * The first string (value or member name), depth first in document order, that holds a lone
 * surrogate; null when every string is well formed. Such a string has no UTF-8 form and no RFC 8785
 * canonical form (I-JSON, RFC 7493 §2.1), so it can be neither hashed, signed, stored as sent nor
 * delivered in a webhook.
 */
export function findLoneSurrogate(value: unknown): LoneSurrogate | null {
  return findInText(value, LONE_SURROGATE, []);
}

/** The first string (value or member name), depth first in document order, where `pattern` matches. */
function findInText(value: unknown, pattern: RegExp, path: string[]): LoneSurrogate | null {
  if (typeof value === 'string') {
    const index = value.search(pattern);
    return index < 0 ? null : { path, memberName: false, text: value, index };
  }
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInText(value[i], pattern, [...path, String(i)]);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [name, member] of Object.entries(value)) {
    const index = name.search(pattern);
    if (index >= 0) return { path: [...path, name], memberName: true, text: name, index };
    const found = findInText(member, pattern, [...path, name]);
    if (found !== null) return found;
  }
  return null;
}

/** `text` with every lone surrogate replaced by U+FFFD (what String.prototype.toWellFormed does). */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/**
 * The error detail for a lone surrogate: `field` is the dotted path the API uses elsewhere
 * (`client_metadata.note`, `root` for the value itself), rule `unicode`. The field and value are
 * given with U+FFFD in place of each lone surrogate, so that the error body is valid Unicode itself.
 */
export function loneSurrogateDetail(found: LoneSurrogate, root = 'body'): ErrorDetail {
  const unit = found.text.charCodeAt(found.index).toString(16).toUpperCase();
  const where = found.memberName ? 'member name' : 'string';
  return {
    field: found.path.length === 0 ? root : found.path.map(wellFormed).join('.'),
    rule: 'unicode',
    value: wellFormed(found.text),
    message: `the ${where} holds a lone UTF-16 surrogate (U+${unit}) at index ${found.index}; text must be valid Unicode`,
  };
}

/**
 * The error detail for text the service cannot store as sent, or null when there is none: a lone
 * surrogate (rule `unicode`) or the character U+0000 (rule `nul_character`), which PostgreSQL's text
 * cannot hold (and the embedded database would keep where the other cannot).
 */
export function unstorableTextDetail(value: unknown, root = 'body'): ErrorDetail | null {
  // One walk for both: the first string holding either, named by the first of the two in it.
  const found = findInText(value, UNSTORABLE, []);
  if (found === null) return null;
  if (found.text.charCodeAt(found.index) !== 0) return loneSurrogateDetail(found, root);
  return {
    field: found.path.length === 0 ? root : found.path.map(wellFormed).join('.'),
    rule: 'nul_character',
    value: wellFormed(found.text),
    message: `the ${found.memberName ? 'member name' : 'string'} holds the character U+0000 at index ${found.index}; text may not hold it`,
  };
}

import { JcsError } from './errors.js';

// In a `u` regex a surrogate pair is one code point, so this class matches only the
// unpaired halves that I-JSON forbids (RFC 7493 §2.1).
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
// Strings without these characters are emitted verbatim between quotes; the rest
// (escapes, any surrogate) take the slow path. Verification speed depends on it.
const SPECIAL = /["\\\u0000-\u001f\uD800-\uDFFF]/;

/**
 * RFC 8785 canonical JSON text of a JSON value.
 *
 * - Strings (§3.2.2.2): JSON.stringify's escaping is exactly the RFC's (the short
 *   escapes \b \t \n \f \r \" \\, other controls as \u00xx lowercase, all else literal).
 * - Numbers (§3.2.2.3): ECMAScript Number::toString, which is what String(n) does;
 *   -0 becomes "0".
 * - Objects (§3.2.3): members sorted by their names' UTF-16 code units, which is
 *   Array.prototype.sort's default order.
 *
 * Only plain objects, arrays, strings, finite numbers, booleans and null are
 * accepted. Anything else throws a JcsError rather than being silently dropped or
 * converted as JSON.stringify would (undefined members, toJSON, bigint), because a
 * signer and a verifier must never disagree on what was signed.
 */
export function canonicalize(value: unknown): string {
  return serialize(value, []);
}

/** UTF-8 bytes of the canonical text (RFC 8785 §3.2.4): the input to a signature or hash. */
export function canonicalizeBytes(value: unknown): Uint8Array {
  return Buffer.from(serialize(value, []), 'utf8');
}

// `ancestors` is the path from the root: short, so an array beats a Set.
function serialize(value: unknown, ancestors: object[]): string {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      if (!Number.isFinite(value)) throw new JcsError('non_finite_number', `${value} has no JSON form`);
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (ancestors.includes(value)) throw new JcsError('cycle', 'the value contains a cycle');
      ancestors.push(value);
      let text: string;
      if (Array.isArray(value)) {
        text = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) text += ',';
          // Holes read as undefined and are rejected like any undefined.
          text += serialize(value[i], ancestors);
        }
        text += ']';
      } else {
        const proto: unknown = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new JcsError('unsupported_type', `${describe(value)} is not a plain object`);
        }
        const record = value as Record<string, unknown>;
        const keys = sortedKeys(record);
        text = '{';
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          if (i > 0) text += ',';
          text += string(key) + ':' + serialize(record[key], ancestors);
        }
        text += '}';
      }
      ancestors.pop();
      return text;
    }
    default:
      throw new JcsError('unsupported_type', `${typeof value} has no JSON form`);
  }
}

function string(value: string): string {
  if (!SPECIAL.test(value)) return '"' + value + '"';
  if (LONE_SURROGATE.test(value)) throw new JcsError('lone_surrogate', 'string is not valid Unicode');
  return JSON.stringify(value);
}

function describe(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' ? name : 'object';
}

/**
 * Member names in UTF-16 code unit order (RFC 8785 §3.2.3), which is what `<` on
 * strings compares. Insertion sort for the small objects of signed documents (it
 * beats Array.prototype.sort there); the built-in sort beyond.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

export type JsonObject = { [member: string]: unknown };

/** An object parsed from JSON: not an array, not null, no exotic prototype. */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The first member of `value` outside `allowed`, or null. */
export function unknownMember(value: JsonObject, allowed: ReadonlySet<string>): string | null {
  for (const key in value) if (!allowed.has(key)) return key;
  return null;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Shallow copy without the named members: the signing input of a detached signature. The copy has
 * no prototype, so a member named `__proto__` (an own member of what JSON.parse returns) is copied
 * as a member and stays signed, instead of being taken as the copy's prototype and dropped.
 */
export function without(value: JsonObject, omit: readonly string[]): JsonObject {
  const copy = Object.create(null) as JsonObject;
  for (const key in value) if (!omit.includes(key)) copy[key] = value[key];
  return copy;
}

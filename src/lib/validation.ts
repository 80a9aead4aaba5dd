import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isCalendarDate, isDateTime } from './dates.js';
import type { ErrorDetail } from './errors.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
type AddFormats = typeof addFormatsModule.default;
const addFormats: AddFormats = (addFormatsModule as unknown as { default: AddFormats }).default;

/**
 * Two validators: bodies are checked as sent (no coercion, so `"10"` is not a number and unknown
 * members are errors, not silently dropped); query strings and path parameters arrive as text, so
 * there numbers are coerced and defaults applied.
 */
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, removeAdditional: false, ...options });
  addFormats(ajv, { mode: 'full', formats: ['date', 'uri', 'uuid', 'email'] });
  // ajv-formats' date-time takes a leap second (23:59:60), which no Date holds: the service's own
  // check accepts only the date-times a Date represents exactly.
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  // ajv-formats' date takes years 0000 to 0099, which the service's day arithmetic does not hold:
  // every date it accepts passes the service's own check, as the audit routes' do.
  ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
  return ajv;
}

export const bodyAjv = makeAjv({ coerceTypes: false, useDefaults: false });
export const textAjv = makeAjv({ coerceTypes: true, useDefaults: true });

/** Path of an error as the API names fields: dotted for bodies (`verifications.0.type`). */
function fieldOf(error: ErrorObject, root: string): { field: string; value: unknown } {
  const segments =
    error.instancePath === ''
      ? []
      : error.instancePath
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let value: unknown = error.data;
  if (error.keyword === 'required') {
    segments.push(String((error.params as { missingProperty: string }).missingProperty));
    value = null;
  } else if (error.keyword === 'additionalProperties') {
    const member = String((error.params as { additionalProperty: string }).additionalProperty);
    segments.push(member);
    value = (error.data as Record<string, unknown> | undefined)?.[member] ?? null;
  }
  return { field: segments.length === 0 ? root : segments.join('.'), value: value === undefined ? null : value };
}

/** Keywords that only summarise their branches; the branch errors say more. */
const SUMMARY_KEYWORDS = new Set(['anyOf', 'oneOf', 'if', 'not']);

export function detailsFromAjv(errors: readonly ErrorObject[], root = 'body'): ErrorDetail[] {
  const specific = errors.some((e) => !SUMMARY_KEYWORDS.has(e.keyword)) ? errors.filter((e) => !SUMMARY_KEYWORDS.has(e.keyword)) : errors;
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const error of specific) {
    const { field, value } = fieldOf(error, root);
    const key = `${field}\u0000${error.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push({ field, rule: error.keyword, value, message: error.message ?? error.keyword });
  }
  return details;
}

export type Validator = (value: unknown) => ErrorDetail[] | null;

/**
 * A validator for values that are not HTTP bodies (import files): details or null when valid. The
 * schema is compiled at the first use: validators are declared at module level, and compiling them
 * all cost every start of the command line half a second.
 */
export function compileValidator(schema: object, root = 'body'): Validator {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= bodyAjv.compile(schema);
    return validate(value) ? null : detailsFromAjv(validate.errors ?? [], root);
  };
}

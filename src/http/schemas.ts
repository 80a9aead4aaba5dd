import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';

/**
 * `T` or null, written as a JSON Schema type list rather than anyOf, so that a wrong value gets one
 * precise validation error instead of one per branch. A closed set (`enum`) lists null too: the type
 * list alone would let null past `type` and refuse it at `enum`.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const base = schema as unknown as { type?: string; enum?: unknown[] };
  return Type.Unsafe<Static<T> | null>({
    ...schema,
    type: [base.type ?? 'object', 'null'],
    ...(base.enum === undefined ? {} : { enum: [...base.enum, null] }),
  });
}

/**
 * An integer or null in a response, for amounts that may exceed 2^53 (a position's value): handed to
 * the serializer as a BigInt, it is written with all its digits. A type list (`Nullable`) would make
 * the serializer refuse a BigInt (a 500); the `nullable` keyword lets it use its integer writer. The
 * OpenAPI document shows it as `type: ['integer', 'null']` (src/http/openapi.ts). Responses only.
 */
export const NullableInteger = (description: string) => Type.Unsafe<number | null>({ type: 'integer', nullable: true, description });

export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) });

export const ErrorDetailSchema = Type.Object(
  {
    field: Type.String({ description: 'The field, header or query parameter: a dotted path for body members.' }),
    rule: Type.String({ description: 'The JSON Schema keyword or the named business rule that failed.' }),
    value: Type.Unknown({ description: 'The offending value (null when absent).' }),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: true, title: 'ErrorDetail' },
);

export const ErrorBody = Type.Object(
  {
    code: Type.String({
      description: 'Machine code from the errors table (`validation_error`, `not_found`, ...); switch on it, not on `message`.',
    }),
    message: Type.String(),
    details: Type.Optional(Type.Array(ErrorDetailSchema)),
    request_id: Type.String({ description: 'Quote it to support; equals the X-Request-Id header.' }),
    error: Type.Optional(
      Type.String({
        description:
          'Token endpoint only: the OAuth 2.0 error code (RFC 6749 §5.2): `invalid_request`, `invalid_client`, `unsupported_grant_type`, `invalid_scope`, `temporarily_unavailable` (429) or `server_error` (500).',
      }),
    ),
    error_description: Type.Optional(
      Type.String({ description: 'Token endpoint only: the OAuth 2.0 error description, the same text as `message`.' }),
    ),
  },
  { title: 'Error', additionalProperties: true },
);

/**
 * The Error body as a response of its own description, for an operation whose errors mean something
 * other than the shared description of their status says (the token endpoint's 401 is about client
 * credentials, not an access token). The description goes to the document's response, not the schema.
 */
export function errorResponse(description: string): typeof ErrorBody & { 'x-response-description': string } {
  return { ...ErrorBody, 'x-response-description': description };
}

/**
 * The schema option of a body that may be left out (the route pairs it with the `absentBodyIsEmpty`
 * hook, which makes no body `{}`); the OpenAPI document then marks the body not required.
 */
export const OPTIONAL_BODY = { 'x-optional-body': true } as const;

/**
 * The schema of a query string. A parameter with a default is filled in before the handler runs (the
 * query validator applies defaults), so it is typed as present but documented as optional: it is
 * left out of `required`.
 */
export function QueryObject<T extends TProperties>(properties: T) {
  const schema = Type.Object(properties, { additionalProperties: false });
  const required = ((schema.required ?? []) as string[]).filter((key) => (properties[key] as { default?: unknown }).default === undefined);
  if (required.length > 0) (schema as { required?: string[] }).required = required;
  else delete (schema as { required?: string[] }).required;
  return schema;
}

export const PageQuery = {
  cursor: Type.Optional(Type.String({ description: 'Opaque value from X-Cursor-Next (or X-Cursor-Prev).', maxLength: 512 })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
};

export const pageHeaders = {
  'x-cursor-next': Type.String({ description: 'Cursor of the next page; empty on the last page.' }),
  link: Type.String({
    description:
      'RFC 8288 links to the next page (rel="next") and, on listings that have one, the previous page (rel="prev"): the cursors above as absolute URLs. Absent when there is neither.',
  }),
};

/** A closed set of strings as one JSON Schema `enum`: one precise error (`rule: enum`) when wrong. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

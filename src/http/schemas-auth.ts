import { Type } from '@sinclair/typebox';
import { ErrorBody } from './schemas.js';

/**
 * The Idempotency-Key header of a mutating POST. Its presence and format are checked by the
 * idempotency service (422 naming `Idempotency-Key`), not by the schema; the OpenAPI document
 * describes it as required, a UUID (src/http/openapi.ts). Declaring it is what makes a route
 * idempotent to the document and guards it (guardIdempotentRoutes).
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'UUID; required. A retry with the same key and body within 24 hours returns the first response.' }),
  ),
});

/** Error responses of a protected route, plus any others it names. */
export function protectedErrors(...more: number[]) {
  return Object.fromEntries([401, 403, 429, ...more].map((s) => [s, ErrorBody])) as Record<number, typeof ErrorBody>;
}

/**
 * Not needed: the document derives each operation's security from the route's `config.scope` (none
 * when the route has no scope). Kept so that a route naming it still compiles; the document ignores it.
 */
export const bearerSecurity = [{ bearerAuth: [] as string[] }];

import { Type } from '@sinclair/typebox';
import { ErrorBody } from './schemas.js';

/** The Idempotency-Key header, documented; its presence and format are checked by the idempotency service. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'UUID; required. A retry with the same key and body within 24 hours returns the first response.' })),
});

/** Error responses of a protected route, plus any others it names. */
export function protectedErrors(...more: number[]) {
  return Object.fromEntries([401, 403, 429, ...more].map((s) => [s, ErrorBody])) as Record<number, typeof ErrorBody>;
}

export const bearerSecurity = [{ bearerAuth: [] as string[] }];

import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import { replyIdempotently } from '../idempotency/idempotent-reply.js';
import { pageHeaders } from '../http/schemas.js';
import { IdempotencyHeaders, bearerSecurity, protectedErrors } from '../http/schemas-auth.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import { validationError } from '../lib/errors.js';
import type { Database } from '../storage/schema.js';
import { Position, PositionListQuery, Statement, StatementListQuery, StatementRequest } from './position.schemas.js';
import type { PositionService } from './position.service.js';
import type { StatementService } from './statement.service.js';

export interface PositionRouteDeps {
  db: Kysely<Database>;
  positions: PositionService;
  statements: StatementService;
  idempotency: IdempotencyService;
  cursors: CursorCodec;
}

/** A position's key in a cursor: subject, partner and instrument. */
function keyOf(position: string): [string, string, string] {
  const key = JSON.parse(position) as unknown;
  if (!Array.isArray(key) || key.length !== 3 || !key.every((k) => typeof k === 'string')) {
    throw validationError([{ field: 'cursor', rule: 'cursor', value: position }], 'Invalid cursor');
  }
  return key as [string, string, string];
}

/**
 * Positions and the statements of holdings they start from: the routes parse, call the services,
 * and serialise. Declaring a statement takes an Idempotency-Key like every mutating POST.
 */
export const positionRoutes: FastifyPluginAsyncTypebox<PositionRouteDeps> = async (
  app,
  { db, positions, statements, idempotency, cursors },
) => {
  app.get(
    '/v1/positions',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'listPositions',
        tags: ['Positions'],
        summary: 'List positions: per subject, partner and instrument, with cost, value and profit and loss',
        description:
          "Ordered by subject, partner and instrument. Quantities come from the latest statement of holdings and the fills since (fills alone without a statement); the average cost is the weighted average of gross prices, a sell leaves it unchanged and realises `(price - average cost) x qty`; market value and unrealised profit and loss use the instrument's reference price. Amounts are in cents of `currency`. A closed position (`qty` 0) stays listed with its realised profit or loss.",
        security: bearerSecurity,
        querystring: PositionListQuery,
        response: { 200: Type.Object({ data: Type.Array(Position) }, { headers: pageHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { cursor, limit, ...filters } = request.query;
      const paging = new KeysetPaging(cursors, 'positions', filters);
      const position = paging.after(cursor);
      const page = await positions.list(db, authOf(request).clientId, filters, {
        limit,
        ...(position === null ? {} : { after: keyOf(position) }),
      });
      return paging.send(reply, page.items, page.next === null ? null : JSON.stringify(page.next));
    },
  );

  app.post(
    '/v1/positions/statements',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'createStatement',
        tags: ['Positions'],
        summary: "Declare a statement of a subject's holdings at a partner, from the SGI's statement",
        description:
          "The holdings settled at the end of `as_of`, every line of the statement (an instrument left out is held at 0). The statement is compared with the service's records for that date (the previous statement plus the fills settled since; every fill settled by then before the first statement): each instrument that differs is a break, listed in the answer and emitted as `position.break`. It then becomes the start of the subject's positions at the partner: each is its line plus the fills settling after `as_of`, and realised profit and loss starts again. A statement of the latest one's date corrects it; an earlier date is 422 `not_before_latest`. Unknown instruments, negative quantities and a future date are 422 naming the field; a refused statement stores nothing.",
        security: bearerSecurity,
        headers: IdempotencyHeaders,
        body: StatementRequest,
        response: { 201: Statement, ...protectedErrors(409, 422) },
      },
    },
    async (request, reply) =>
      replyIdempotently(idempotency, request, reply, async (trx) => {
        const statement = await statements.declare(trx, authOf(request).clientId, request.body);
        if (statement.breaks.length > 0) {
          request.log.warn(
            { statement_id: statement.id, subject_id: statement.subject_id, rcpt_to: statement.rcpt_to, breaks: statement.breaks.length },
            'statement disagrees with the fills: breaks reported',
          );
        }
        return { status: 201, body: statement };
      }),
  );

  app.get(
    '/v1/positions/statements/:id',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'getStatement',
        tags: ['Positions'],
        summary: 'Read a statement with its breaks',
        security: bearerSecurity,
        params: Type.Object({ id: Type.String() }),
        response: { 200: Statement, ...protectedErrors(404) },
      },
    },
    async (request) => statements.get(db, authOf(request).clientId, request.params.id),
  );

  app.get(
    '/v1/positions/statements',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'listStatements',
        tags: ['Positions'],
        summary: 'List statements, newest first',
        security: bearerSecurity,
        querystring: StatementListQuery,
        response: { 200: Type.Object({ data: Type.Array(Statement) }, { headers: pageHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { cursor, limit, ...filters } = request.query;
      const paging = new KeysetPaging(cursors, 'statements', filters);
      // Statements are listed newest first: the page continues before the position.
      const before = paging.after(cursor);
      const page = await statements.list(db, authOf(request).clientId, filters, { limit, ...(before === null ? {} : { before }) });
      return paging.send(reply, page.items, page.next);
    },
  );
};

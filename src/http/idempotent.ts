import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import type { IdempotencyService, WorkResult } from '../idempotency/idempotency.service.js';
import type { Database } from '../storage/schema.js';

/**
 * Replaces the stored response, inside the transaction that made the new response true; `status`
 * replaces the first status too (a cancel answered by the partner within the request is 200, not 202).
 */
export type Rewrite = (trx: Kysely<Database>, body: unknown, status?: number) => Promise<void>;

/**
 * Runs a mutating POST under its Idempotency-Key and sends the response. The body is serialised by the
 * route's own response schema, stored, and sent as bytes, so a replay is byte-for-byte the first
 * response (plus `Idempotent-Replayed: true`). `afterCommit` runs once, after the first run commits,
 * for work that must not hold the transaction (calling a partner); it may return a newer body, which
 * it has stored with `rewrite` in the same transaction as the change it reports.
 */
export async function replyIdempotently(
  idempotency: IdempotencyService,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (trx: Kysely<Database>) => Promise<WorkResult>,
  afterCommit?: (result: WorkResult, rewrite: Rewrite) => Promise<unknown>,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  const clientId = authOf(request).clientId;
  const serialize = (result: WorkResult) => String(reply.code(result.status).serialize(result.body));
  const outcome = await idempotency.run(
    {
      clientId,
      key,
      // Fastify's params object has a null prototype; a plain copy is what the canonical form takes.
      fingerprint: { method: request.method, route: request.routeOptions.url, params: { ...(request.params as object) }, body: request.body ?? null },
    },
    serialize,
    work,
  );
  let body = outcome.body;
  let status = outcome.status;
  if (outcome.replayed) {
    reply.header('idempotent-replayed', 'true');
  } else if (afterCommit !== undefined && outcome.result !== undefined) {
    const first = outcome.result.status;
    let rewritten: { status: number; body: string } | null = null;
    await afterCommit(outcome.result, async (trx, newBody, newStatus = first) => {
      rewritten = { status: newStatus, body: serialize({ status: newStatus, body: newBody }) };
      await idempotency.rewrite(trx, clientId, key ?? '', rewritten.body, newStatus);
    });
    if (rewritten !== null) ({ status, body } = rewritten);
  }
  return reply.code(status).type('application/json; charset=utf-8').send(Buffer.from(body));
}

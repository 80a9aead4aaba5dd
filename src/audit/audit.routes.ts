import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { protectedErrors } from '../http/schemas-auth.js';
import type { Database } from '../storage/schema.js';
import { AuditSnapshot, ProofParams, SnapshotParams, SnapshotProof } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

export interface AuditRouteDeps {
  db: Kysely<Database>;
  audit: AuditService;
}

export const auditRoutes: FastifyPluginAsyncTypebox<AuditRouteDeps> = async (app, { db, audit }) => {
  app.get(
    '/v1/audit/snapshots/:date',
    {
      config: { scope: 'audit:read' },
      schema: {
        operationId: 'getAuditSnapshot',
        tags: ['Audit'],
        summary: "A day's signed Merkle snapshot of orders, once anchored",
        description:
          'Built after the UTC day ends, anchored, then served: 404 until then, also for a future day. A string that is not a calendar day (2026-02-30) is 422.',

        params: SnapshotParams,
        response: { 200: AuditSnapshot, ...protectedErrors(404, 422) },
      },
    },
    async (request) => audit.snapshot(db, request.params.date),
  );

  app.get(
    '/v1/audit/snapshots/:date/proofs/:order_id',
    {
      config: { scope: 'audit:read' },
      schema: {
        operationId: 'getSnapshotProof',
        tags: ['Audit'],
        summary: 'Inclusion proof of one of your orders in its day snapshot',
        description:
          "Verify it offline with @cauri/verifier (verifySnapshotProof) or `cauri-verify proof`. 404 for an unknown order, another client's order, an order created on another day, or a snapshot not yet anchored.",

        params: ProofParams,
        response: { 200: SnapshotProof, ...protectedErrors(404, 422) },
      },
    },
    async (request) => audit.proof(db, authOf(request).clientId, request.params.date, request.params.order_id),
  );
};

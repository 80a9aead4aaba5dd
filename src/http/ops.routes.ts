import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { ping } from '../storage/dialect.js';
import type { Metrics } from './metrics.js';

export interface OpsRouteDeps {
  db: Kysely<any>;
  metrics: Metrics;
  /** Other dependencies readiness waits for, by name (Redis when configured). */
  checks?: Record<string, () => Promise<void>>;
}

/** Liveness, readiness, metrics and the machine-readable description. */
export const opsRoutes: FastifyPluginAsyncTypebox<OpsRouteDeps> = async (app, { db, metrics, checks = {} }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['Operations'], summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: the database (and Redis, when configured) answer',
        response: {
          200: Type.Object({ status: Type.Literal('ready') }),
          503: Type.Object({ status: Type.Literal('unavailable'), reason: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      for (const [name, check] of Object.entries({ database: () => ping(db), ...checks })) {
        try {
          await check();
        } catch (error) {
          request.log.warn({ err: error, dependency: name }, 'readiness check failed');
          return reply.code(503).send({ status: 'unavailable' as const, reason: `${name} unreachable` });
        }
      }
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    { schema: { tags: ['Operations'], summary: 'Prometheus metrics (text exposition format)', produces: ['text/plain'] } },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );

  app.get(
    '/v1/openapi.json',
    { schema: { tags: ['Operations'], summary: 'This OpenAPI 3.1 description' } },
    async () => app.swagger(),
  );
};

import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { ping } from '../storage/dialect.js';
import type { Metrics } from './metrics.js';

export interface OpsRouteDeps {
  // biome-ignore lint/suspicious/noExplicitAny: the readiness check runs a bare `select 1` against any schema.
  db: Kysely<any>;
  metrics: Metrics;
  /** Other dependencies readiness waits for, by name: without one, the process cannot serve (503). */
  checks?: Record<string, () => Promise<void>>;
  /**
   * Dependencies whose loss degrades the service without stopping it, by name, with what their loss
   * means: readiness stays 200 (taking every process out of the load balancer would turn a degraded
   * service into an outage) and says `degraded`, naming them.
   */
  degradable?: Record<string, { check: () => Promise<void>; effect: string }>;
  /** True once the process is shutting down: readiness then answers 503 while requests in flight finish. */
  draining?: () => boolean;
}

/** Liveness, readiness, metrics and the machine-readable description. */
export const opsRoutes: FastifyPluginAsyncTypebox<OpsRouteDeps> = async (
  app,
  { db, metrics, checks = {}, degradable = {}, draining = () => false },
) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'checkLiveness',
        tags: ['Operations'],
        summary: 'Liveness: the process answers',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'checkReadiness',
        tags: ['Operations'],
        summary:
          'Readiness: the database answers (and Redis, when configured: without it the service is degraded, still ready); 503 once the process is shutting down',
        response: {
          200: Type.Object({
            status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
            reason: Type.Optional(Type.String({ description: 'When degraded: what is unreachable and what that changes' })),
          }),
          503: Type.Object({ status: Type.Literal('unavailable'), reason: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      if (draining()) return reply.code(503).send({ status: 'unavailable' as const, reason: 'shutting down' });
      for (const [name, check] of Object.entries({ database: () => ping(db), ...checks })) {
        try {
          await check();
        } catch (error) {
          request.log.warn({ err: error, dependency: name }, 'readiness check failed');
          return reply.code(503).send({ status: 'unavailable' as const, reason: `${name} unreachable` });
        }
      }
      const reasons: string[] = [];
      for (const [name, { check, effect }] of Object.entries(degradable)) {
        // Not logged here: the dependency reports its own outage, once.
        await check().catch(() => reasons.push(`${name} unreachable: ${effect}`));
      }
      return reasons.length === 0 ? { status: 'ready' as const } : { status: 'degraded' as const, reason: reasons.join('; ') };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        tags: ['Operations'],
        summary: 'Prometheus metrics (text exposition format)',
        response: {
          200: { description: 'The metrics, in the Prometheus text format', content: { 'text/plain': { schema: Type.String() } } },
        },
      },
    },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );

  app.get(
    '/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['Operations'],
        summary: 'This OpenAPI 3.1 description',
        response: {
          200: {
            description: 'The OpenAPI document',
            content: { 'application/json': { schema: Type.Object({}, { additionalProperties: true }) } },
          },
        },
      },
    },
    async () => app.swagger(),
  );
};

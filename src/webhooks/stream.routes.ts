import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { ErrorBody } from '../http/schemas.js';
import { protectedErrors } from '../http/schemas-auth.js';
import type { Clock } from '../lib/clock.js';
import { validationError } from '../lib/errors.js';
import { isId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import { DEFAULT_FOLLOW_OPTIONS, EventFollower, type FollowOptions } from './event-follower.js';
import { lastEventIdAt } from './sse.js';

export interface EventStreamRouteDeps {
  db: Kysely<Database>;
  clock: Clock;
  follow?: Partial<FollowOptions>;
}

const scope = 'webhooks:manage' as const;
const tags = ['Events'];

const StreamQuery = Type.Object(
  {
    last_event_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Resume after this event id; for clients that cannot set the Last-Event-ID header.' }),
    ),
  },
  { additionalProperties: false },
);
const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ description: 'Resume after this event id (sent by EventSource clients on reconnection).' })),
});

/** Every status of the stream route carries its media type, so the documented `produces` applies to the 200 alone. */
const jsonErrors = Object.fromEntries(
  Object.keys(protectedErrors(422)).map((s) => [s, { description: 'Error', content: { 'application/json': { schema: ErrorBody } } }]),
);

/** The event's resume position: the header wins over the query parameter. Unknown but well-formed ids are positions too. */
function resumeAfter(header: string | undefined, query: string | undefined): string | null {
  const value = header ?? query;
  if (value === undefined || value === '') return null;
  if (!isId('event', value))
    throw validationError([{ field: header === undefined ? 'last_event_id' : 'Last-Event-ID', rule: 'format', value }]);
  return value;
}

/**
 * The live event stream (Server-Sent Events). Registered beside the webhook routes;
 * `GET /v1/events/stream` is a static path, so it takes precedence over `GET /v1/events/:id`.
 */
export const eventStreamRoutes: FastifyPluginAsyncTypebox<EventStreamRouteDeps> = async (app, deps) => {
  const { db, clock } = deps;
  const follow: FollowOptions = { ...DEFAULT_FOLLOW_OPTIONS, ...deps.follow };
  const open = new Set<EventFollower>();

  // Streams never finish by themselves: they are ended before the server waits for open requests,
  // so that closing the runtime does not hang, and before the database closes.
  app.addHook('preClose', async () => {
    await Promise.all([...open].map((f) => f.stop()));
  });

  app.get(
    '/v1/events/stream',
    {
      config: { scope },
      schema: {
        operationId: 'streamEvents',
        tags,
        summary: "Follow the client's events as they happen (Server-Sent Events), resuming after Last-Event-ID",
        description:
          'Each event is sent as `id: <event id>`, `event: <type>` and `data: <envelope>`, where the envelope is byte for byte the body a webhook delivery of it carries. ' +
          "Sends the client's events and those addressed to every client, in id order, about two seconds after they happen. With `Last-Event-ID` (or `last_event_id`) the stored events after that id are sent first. " +
          'A `: ping` comment comes every 15 seconds. The stream ends when the access token expires; reconnect with a new token and the last id received.',

        produces: ['text/event-stream'],
        headers: StreamHeaders,
        querystring: StreamQuery,
        response: {
          200: {
            description: 'An endless text/event-stream',
            content: { 'text/event-stream': { schema: Type.String({ description: 'SSE frames' }) } },
          },
          ...jsonErrors,
        },
      },
    },
    async (request, reply) => {
      const grant = authOf(request);
      const after = resumeAfter(request.headers['last-event-id'], request.query.last_event_id);
      // Without a position the stream starts now: nothing older than the settle window is replayed.
      const cursor = after ?? lastEventIdAt(clock.now().getTime() - follow.settleMs);
      const res = reply.raw;
      reply.hijack();
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        // The client's own events, like every authenticated answer: no cache may keep them
        // (no-store); no-transform keeps proxies from compressing, and so buffering, the stream.
        'cache-control': 'no-store, no-transform',
        connection: 'keep-alive',
        // Reverse proxies (nginx) would otherwise buffer the stream.
        'x-accel-buffering': 'no',
      });
      // A HEAD gets the stream's headers and ends: it carries no events, and Node sends the headers
      // of a response without a body only when it ends, so a HEAD left open would hang unanswered.
      if (request.method === 'HEAD') {
        res.end();
        return;
      }
      res.write(': connected\n\n');
      const follower = new EventFollower(db, clock, res, grant.clientId, cursor, grant.exp * 1000, grant.iat, follow);
      open.add(follower);
      const gone = () => void follower.stop();
      res.once('close', gone);
      await follower.start((error) => request.log.error({ err: error }, 'event stream failed'));
      open.delete(follower);
      res.off('close', gone);
      if (!res.destroyed) res.end();
    },
  );
};

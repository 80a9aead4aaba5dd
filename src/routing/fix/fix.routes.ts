import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { bearerSecurity, protectedErrors } from '../../http/schemas-auth.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import type { Database } from '../../storage/schema.js';
import { sessionViews } from './session-view.js';

const Time = (description: string) => Nullable(Type.String({ format: 'date-time', description }));

export const FixSession = Type.Object(
  {
    partner_id: Type.String({ description: 'The SGI partner (sgi_...).' }),
    partner_name: Nullable(Type.String()),
    state: StringEnum(['connecting', 'logged_on', 'disconnected', 'outside_window'], {
      description:
        'connecting: connection or Logon under way; logged_on: orders can go; disconnected: down, reconnecting with backoff (see last_error); outside_window: outside the daily session window.',
    }),
    sender_comp_id: Type.String({ description: 'SenderCompID (49) of this service.' }),
    target_comp_id: Type.String({ description: 'TargetCompID (56): the SGI.' }),
    next_sender_seq: Type.Integer({ description: 'MsgSeqNum of the next message this service sends (out).' }),
    next_target_seq: Type.Integer({ description: 'MsgSeqNum this service expects next from the SGI (in).' }),
    last_logon_at: Time('When the SGI last answered the Logon.'),
    last_sent_at: Time('When the last message was sent.'),
    last_received_at: Time('When the last message was received.'),
    held_by: Nullable(Type.String({ description: 'The process holding the session now (its lease), or null when none does.' })),
    last_error: Nullable(Type.String({ description: 'Why the last connection failed or ended, or null.' })),
  },
  { title: 'FixSession' },
);

export interface FixRouteDeps {
  db: Kysely<Database>;
  clock: Clock;
}

/**
 * The FIX partners' sessions, for the deployment's operators (scope `operator:read`): what
 * `cauri partners sessions` shows, for the dashboard.
 */
export const fixRoutes: FastifyPluginAsyncTypebox<FixRouteDeps> = async (app, { db, clock }) => {
  app.get(
    '/v1/operator/fix-sessions',
    {
      config: { scope: 'operator:read' },
      schema: {
        operationId: 'listFixSessions',
        tags: ['Operations'],
        summary: "The FIX partners' sessions (operators only)",
        description:
          "Each FIX partner's session: state, CompIDs, sequence numbers in and out, last logon and message times, the process holding it and the last error; by partner id. Needs the scope operator:read, which a client has only when the operator created it with that scope. The sessions carry every client's order flow, so integrators' clients have no view of them.",
        security: bearerSecurity,
        response: { 200: Type.Object({ data: Type.Array(FixSession) }), ...protectedErrors() },
      },
    },
    async () => ({ data: await sessionViews(db, clock.now().getTime()) }),
  );
};

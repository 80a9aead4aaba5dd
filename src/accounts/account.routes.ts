import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { authOf } from '../auth/authenticate.js';
import { KeysetPaging, type CursorCodec } from '../http/cursor.js';
import { pageHeaders } from '../http/schemas.js';
import { bearerSecurity, protectedErrors } from '../http/schemas-auth.js';
import type { Transact } from '../storage/database.js';
import type { Database } from '../storage/schema.js';
import { AccountListQuery, AccountNumberRequest, AccountParams, InvestorAccount, SubjectParams } from './account.schemas.js';
import type { AccountService } from './account.service.js';

export interface AccountRouteDeps {
  db: Kysely<Database>;
  transact: Transact;
  accounts: AccountService;
  cursors: CursorCodec;
}

const tags = ['Accounts'];

/**
 * Investors' account numbers at the SGIs, per subject and partner (docs/accounts.md). PUT creates or
 * replaces, so a repeated request is harmless and takes no Idempotency-Key; reading needs
 * `orders:read`, changing `orders:write`.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<AccountRouteDeps> = async (app, { db, transact, accounts, cursors }) => {
  app.put(
    '/v1/subjects/:subject_id/accounts/:partner_id',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'setInvestorAccount',
        tags,
        summary: "Register the investor's account number at an SGI, or replace it",
        description:
          '201 when the subject had no account at this partner, 200 when it replaces (or repeats) the one registered. Orders placed afterwards carry it (FIX Account, tag 1); orders already placed keep the account they were accepted with. An unknown partner, or one not in the directory, is 404.',
        security: bearerSecurity,
        params: AccountParams,
        body: AccountNumberRequest,
        response: { 200: InvestorAccount, 201: InvestorAccount, ...protectedErrors(404, 422) },
      },
    },
    async (request, reply) => {
      const { created, account } = await transact((trx) =>
        accounts.put(trx, authOf(request).clientId, request.params, request.body.account_number),
      );
      return reply.code(created ? 201 : 200).send(account);
    },
  );

  app.get(
    '/v1/subjects/:subject_id/accounts',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'listInvestorAccounts',
        tags,
        summary: "List a subject's accounts at the SGIs, ordered by partner id",
        description: 'A subject with no account registered has an empty list.',
        security: bearerSecurity,
        params: SubjectParams,
        querystring: AccountListQuery,
        response: { 200: Type.Object({ data: Type.Array(InvestorAccount) }, { headers: pageHeaders }), ...protectedErrors(422) },
      },
    },
    async (request, reply) => {
      const { subject_id: subjectId } = request.params;
      const { cursor, limit } = request.query;
      // The cursor is bound to the subject: it pages this subject's list and no other.
      const filters = { subject_id: subjectId };
      const paging = new KeysetPaging(cursors, 'investor_accounts', filters);
      const page = await accounts.list(db, authOf(request).clientId, subjectId, { limit, afterPartnerId: paging.after(cursor) });
      return paging.send(reply, page.items, page.nextAfter);
    },
  );

  app.get(
    '/v1/subjects/:subject_id/accounts/:partner_id',
    {
      config: { scope: 'orders:read' },
      schema: {
        operationId: 'getInvestorAccount',
        tags,
        summary: "Read the subject's account at one SGI",
        security: bearerSecurity,
        params: AccountParams,
        response: { 200: InvestorAccount, ...protectedErrors(404, 422) },
      },
    },
    async (request) => accounts.get(db, authOf(request).clientId, request.params),
  );

  app.delete(
    '/v1/subjects/:subject_id/accounts/:partner_id',
    {
      config: { scope: 'orders:write' },
      schema: {
        operationId: 'deleteInvestorAccount',
        tags,
        summary: "Remove the subject's account at one SGI",
        description:
          "Orders already placed keep their account. Later orders to this partner take the partner's default account, or are refused (422 `account`) by a partner that requires one and has none.",
        security: bearerSecurity,
        params: AccountParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...protectedErrors(404, 422) },
      },
    },
    async (request, reply) => {
      await transact((trx) => accounts.remove(trx, authOf(request).clientId, request.params));
      return reply.code(204).send(null);
    },
  );
};

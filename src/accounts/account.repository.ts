import type { Kysely } from 'kysely';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { InvestorAccountRow } from './account.table.js';

/** One registration: the client's, for one subject at one partner. */
export interface AccountKey {
  client_id: string;
  subject_id: string;
  partner_id: string;
}

// Read by every order (orders/order.service.ts), hence prepared.
const accountByKey = new PreparedQuery(3, (qb, clientId: string, subjectId: string, partnerId: string) =>
  qb
    .selectFrom('investor_accounts')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('subject_id', '=', subjectId)
    .where('partner_id', '=', partnerId),
);

export async function findInvestorAccount(db: Kysely<Database>, key: AccountKey): Promise<InvestorAccountRow | undefined> {
  return accountByKey.first(db, key.client_id, key.subject_id, key.partner_id);
}

/**
 * The subject's registrations, ordered by partner, after `afterPartnerId` when given; one row more
 * than `limit` tells that a page follows.
 */
export async function listSubjectAccounts(
  db: Kysely<Database>,
  clientId: string,
  subjectId: string,
  page: { limit: number; afterPartnerId: string | null },
): Promise<InvestorAccountRow[]> {
  let query = db.selectFrom('investor_accounts').selectAll().where('client_id', '=', clientId).where('subject_id', '=', subjectId);
  if (page.afterPartnerId !== null) query = query.where('partner_id', '>', page.afterPartnerId);
  return query
    .orderBy('partner_id')
    .limit(page.limit + 1)
    .execute();
}

/** Inserts the registration unless one exists for its key; whether it did. */
export async function insertInvestorAccount(db: Kysely<Database>, row: InvestorAccountRow): Promise<boolean> {
  const result = await db
    .insertInto('investor_accounts')
    .values(row)
    .onConflict((oc) => oc.columns(['client_id', 'subject_id', 'partner_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function updateInvestorAccount(db: Kysely<Database>, key: AccountKey, accountNumber: string, now: number): Promise<void> {
  await db
    .updateTable('investor_accounts')
    .set({ account_number: accountNumber, updated_at: now })
    .where('client_id', '=', key.client_id)
    .where('subject_id', '=', key.subject_id)
    .where('partner_id', '=', key.partner_id)
    .execute();
}

/** Whether there was a registration to delete. */
export async function deleteInvestorAccount(db: Kysely<Database>, key: AccountKey): Promise<boolean> {
  const result = await db
    .deleteFrom('investor_accounts')
    .where('client_id', '=', key.client_id)
    .where('subject_id', '=', key.subject_id)
    .where('partner_id', '=', key.partner_id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** For operators: a client's registrations, of one subject or of all, by subject then partner. */
export async function listClientAccounts(
  db: Kysely<Database>,
  clientId: string,
  filter: { subjectId?: string; partnerId?: string },
): Promise<InvestorAccountRow[]> {
  let query = db.selectFrom('investor_accounts').selectAll().where('client_id', '=', clientId);
  if (filter.subjectId !== undefined) query = query.where('subject_id', '=', filter.subjectId);
  if (filter.partnerId !== undefined) query = query.where('partner_id', '=', filter.partnerId);
  return query.orderBy('subject_id').orderBy('partner_id').execute();
}

import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import { ApiError, notFound, type ErrorDetail } from '../lib/errors.js';
import { isId, type ClientId } from '../lib/ids.js';
import type { ReferencePartner } from '../partners/reference-data.js';
import { findPartner } from '../partners/partner.repository.js';
import type { Database } from '../storage/schema.js';
import {
  deleteInvestorAccount,
  findInvestorAccount,
  insertInvestorAccount,
  listSubjectAccounts,
  updateInvestorAccount,
  type AccountKey,
} from './account.repository.js';
import type { AccountParams, InvestorAccount } from './account.schemas.js';
import type { InvestorAccountRow } from './account.table.js';
import { accountForOrder } from '../partners/core/account-rule.js';

export function toInvestorAccount(row: InvestorAccountRow): InvestorAccount {
  return {
    subject_id: row.subject_id,
    partner_id: row.partner_id,
    account_number: row.account_number,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}

export interface AccountPage {
  items: InvestorAccount[];
  /** The partner id to continue after, or null on the last page. */
  nextAfter: string | null;
}

const keyOf = (clientId: ClientId, params: AccountParams): AccountKey => ({
  client_id: clientId,
  subject_id: params.subject_id,
  partner_id: params.partner_id,
});

function noAccount(params: AccountParams): ApiError {
  return new ApiError('not_found', `No account of subject ${params.subject_id} registered at ${params.partner_id}`);
}

/**
 * Investors' account numbers at the SGIs, registered by each client per subject and partner. A
 * client reads and changes only its own: another client's registration is not found, like one that
 * does not exist.
 */
export class AccountService {
  constructor(private readonly clock: Clock) {}

  /**
   * Registers the account number, or replaces the one registered, in the caller's transaction;
   * `created` tells which. The partner must be in the directory (approved), else 404. The same
   * number again changes nothing (`updated_at` stays). Orders already placed keep the account they
   * were accepted with.
   */
  async put(
    trx: Kysely<Database>,
    clientId: ClientId,
    params: AccountParams,
    accountNumber: string,
  ): Promise<{ created: boolean; account: InvestorAccount }> {
    const partner = isId('partner', params.partner_id) ? await findPartner(trx, params.partner_id) : undefined;
    if (partner === undefined || partner.status !== 'approved') throw notFound('SGI partner', params.partner_id);
    const key = keyOf(clientId, params);
    const now = this.clock.now().getTime();
    let existing = await findInvestorAccount(trx, key);
    if (existing === undefined) {
      const row: InvestorAccountRow = { ...key, account_number: accountNumber, created_at: now, updated_at: now };
      if (await insertInvestorAccount(trx, row)) return { created: true, account: toInvestorAccount(row) };
      // Registered meanwhile by a concurrent request of the client, which committed first.
      existing = await findInvestorAccount(trx, key);
      if (existing === undefined) throw new Error(`account of ${params.subject_id} at ${params.partner_id}: neither inserted nor found`);
    }
    if (existing.account_number === accountNumber) return { created: false, account: toInvestorAccount(existing) };
    await updateInvestorAccount(trx, key, accountNumber, now);
    return { created: false, account: toInvestorAccount({ ...existing, account_number: accountNumber, updated_at: now }) };
  }

  async get(db: Kysely<Database>, clientId: ClientId, params: AccountParams): Promise<InvestorAccount> {
    const row = await findInvestorAccount(db, keyOf(clientId, params));
    if (row === undefined) throw noAccount(params);
    return toInvestorAccount(row);
  }

  /** The subject's accounts, ordered by partner id. A subject with none has an empty list. */
  async list(
    db: Kysely<Database>,
    clientId: ClientId,
    subjectId: string,
    page: { limit: number; afterPartnerId: string | null },
  ): Promise<AccountPage> {
    const rows = await listSubjectAccounts(db, clientId, subjectId, page);
    const items = rows.slice(0, page.limit).map(toInvestorAccount);
    return { items, nextAfter: rows.length > page.limit ? (items.at(-1)?.partner_id ?? null) : null };
  }

  /** Removes the registration (404 when there is none); orders already placed keep their account. */
  async remove(trx: Kysely<Database>, clientId: ClientId, params: AccountParams): Promise<void> {
    if (!(await deleteInvestorAccount(trx, keyOf(clientId, params)))) throw noAccount(params);
  }
}

/**
 * The account an order of `subjectId` to `partner` is accepted with, read in the order's
 * transaction: the client's registration for the subject at the partner, else the partner's default.
 * A partner that requires an account (partners/core/account-rule.ts) with neither gives the 422 detail of rule
 * `account`.
 */
export async function accountOfOrder(
  trx: Kysely<Database>,
  clientId: ClientId,
  subjectId: string,
  partner: ReferencePartner,
): Promise<{ account: string | null } | ErrorDetail> {
  const registered = await findInvestorAccount(trx, { client_id: clientId, subject_id: subjectId, partner_id: partner.id });
  const chosen = accountForOrder(partner.account, registered?.account_number);
  if (chosen !== 'missing') return chosen;
  return {
    field: 'rcpt_to',
    rule: 'account',
    value: partner.id,
    subject_id: subjectId,
    message: `${partner.id} needs the investor's account number at the SGI and has no default: register one for subject ${subjectId} (PUT /v1/subjects/${subjectId}/accounts/${partner.id})`,
  };
}

import type { Kysely } from 'kysely';

// Frozen in time: investors' account numbers at the SGIs.
//
// - investor_accounts: per client, subject and partner, the account number the client registered.
//   The key is the triple; a client's listing of one subject reads the key's prefix, ordered by
//   partner.
// - partners.checks: what the partner requires of an order beyond the common checks (JSON, from the
//   import file), null when nothing; partners of before this migration require nothing more.
// - orders.account: the account number the order was accepted with, fixed then (the registered one,
//   else the partner's default), null when none. Orders of before this migration have none, and their
//   FIX partner's default goes with them as before.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('investor_accounts')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('account_number', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('investor_accounts_pk', ['client_id', 'subject_id', 'partner_id'])
    .execute();
  await db.schema.alterTable('partners').addColumn('checks', 'text').execute();
  await db.schema.alterTable('orders').addColumn('account', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('orders').dropColumn('account').execute();
  await db.schema.alterTable('partners').dropColumn('checks').execute();
  await db.schema.dropTable('investor_accounts').execute();
}

import type { Kysely } from 'kysely';

// Frozen in time: the FIX 4.4 partner connector's durable state.
//
// - partners.fix: the partner's session settings (JSON, from the import file); partners.fix_credentials:
//   its logon username and password, sealed with the master key.
// - fix_sessions: one FIX session per partner. Sequence numbers are committed here: the next one to
//   send in the transaction that stores the message sent under it (before its bytes leave), the next
//   one expected from the partner in the transaction that applies what the partner's messages said.
//   `report_pos` numbers the partner's report log; the lease names the one process that holds the
//   session.
// - fix_messages: every application message sent, by sequence number, for answering ResendRequests.
// - fix_orders: each order handed to the partner and what the partner has said of it so far.
// - fix_requests: each ClOrdID sent (a new order or a cancel) and whether it was answered.
// - fix_reports: the report log the router reads; fix_exec_ids: the ExecIDs already applied.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('partners').addColumn('fix', 'text').execute();
  await db.schema.alterTable('partners').addColumn('fix_credentials', 'text').execute();

  await db.schema
    .createTable('fix_sessions')
    .addColumn('partner_id', 'text', (c) => c.primaryKey())
    .addColumn('begin_string', 'text', (c) => c.notNull())
    .addColumn('sender_comp_id', 'text', (c) => c.notNull())
    .addColumn('target_comp_id', 'text', (c) => c.notNull())
    .addColumn('next_sender_seq', 'integer', (c) => c.notNull())
    .addColumn('next_target_seq', 'integer', (c) => c.notNull())
    .addColumn('period', 'text')
    .addColumn('report_pos', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('last_sent_at', 'bigint')
    .addColumn('last_received_at', 'bigint')
    .addColumn('last_logon_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('fix_messages')
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('msg_type', 'text', (c) => c.notNull())
    .addColumn('cl_ord_id', 'text')
    .addColumn('sending_time', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('fix_messages_pk', ['partner_id', 'seq'])
    .execute();

  await db.schema
    .createTable('fix_orders')
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('qty', 'bigint', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('cum_qty', 'bigint', (c) => c.notNull())
    .addColumn('report_seq', 'integer', (c) => c.notNull())
    .addColumn('partner_order_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fix_orders_pk', ['partner_id', 'order_id'])
    .execute();

  await db.schema
    .createTable('fix_requests')
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('cl_ord_id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('terms', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fix_requests_pk', ['partner_id', 'cl_ord_id'])
    .execute();
  await db.schema.createIndex('fix_requests_order').on('fix_requests').columns(['partner_id', 'order_id']).execute();

  await db.schema
    .createTable('fix_reports')
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('pos', 'bigint', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('fix_reports_pk', ['partner_id', 'pos'])
    .addUniqueConstraint('fix_reports_order_seq', ['partner_id', 'order_id', 'seq'])
    .execute();

  await db.schema
    .createTable('fix_exec_ids')
    .addColumn('partner_id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('exec_id', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fix_exec_ids_pk', ['partner_id', 'order_id', 'exec_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['fix_exec_ids', 'fix_reports', 'fix_requests', 'fix_orders', 'fix_messages', 'fix_sessions']) await db.schema.dropTable(table).execute();
  await db.schema.alterTable('partners').dropColumn('fix_credentials').execute();
  await db.schema.alterTable('partners').dropColumn('fix').execute();
}

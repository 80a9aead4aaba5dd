import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: the order lifecycle (time in force, expiry, cancel reasons, cancels and amends
// waiting for the partner's answer, the partner's last refusal) and an id for each fill.
//
// Orders placed before this migration had no time in force and never expired: they become `gtc`,
// which is how they behaved. A cancel they were waiting on becomes their pending request, and the
// orders already cancelled were cancelled at their client's request.
//
// The expiry queue is `expiry_due_at`, set while an order may still expire and cleared when it is
// claimed or ends; its index holds only those orders. Queries compare the column with a bound, which
// implies the index's condition (SQLite then uses a partial index).
const EXPIRY_DUE = sql.raw<boolean>('expiry_due_at is not null');

const ORDER_COLUMNS: [string, 'text' | 'bigint' | 'integer', 'gtc' | 0 | null][] = [
  ['time_in_force', 'text', 'gtc'],
  ['expire_date', 'text', null],
  ['expires_at', 'bigint', null],
  ['expiry_due_at', 'bigint', null],
  ['cancel_reason', 'text', null],
  ['pending_request', 'text', null],
  ['pending_request_id', 'text', null],
  ['cancel_request_reason', 'text', null],
  ['amend_qty', 'bigint', null],
  ['amend_limit_price_cents', 'bigint', null],
  ['requests_made', 'integer', 0],
  ['last_refusal', 'text', null],
];

export async function up(db: Kysely<any>): Promise<void> {
  // One column a statement: SQLite's ALTER TABLE adds one at a time.
  for (const [name, type, fallback] of ORDER_COLUMNS) {
    await db.schema
      .alterTable('orders')
      .addColumn(name, type, (c) => (fallback === null ? c : c.notNull().defaultTo(fallback)))
      .execute();
  }
  await db
    .updateTable('orders')
    .set({ pending_request: 'pending_cancel', pending_request_id: sql`id || '.1'`, cancel_request_reason: 'requested', requests_made: 1 })
    .where('cancel_requested_at', 'is not', null)
    .where('status', 'in', ['created', 'routed', 'partially_filled'])
    .execute();
  await db.updateTable('orders').set({ cancel_reason: 'requested' }).where('status', '=', 'cancelled').execute();
  await db.schema.createIndex('orders_expiry_due').on('orders').columns(['expiry_due_at']).where(EXPIRY_DUE).execute();

  await db.schema.alterTable('order_fills').addColumn('id', 'text').execute();
  const fills = await db.selectFrom('order_fills').select(['order_id', 'seq', 'executed_at']).execute();
  for (const fill of fills) {
    await db.updateTable('order_fills').set({ id: fillId(Number(fill.executed_at)) }).where('order_id', '=', fill.order_id).where('seq', '=', fill.seq).execute();
  }
  await db.schema.createIndex('order_fills_id').on('order_fills').column('id').unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('order_fills_id').execute();
  await db.schema.alterTable('order_fills').dropColumn('id').execute();
  await db.schema.dropIndex('orders_expiry_due').execute();
  for (const [name] of [...ORDER_COLUMNS].reverse()) await db.schema.alterTable('orders').dropColumn(name).execute();
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A fill id as the service makes them: `fil_` and a UUIDv7 at `ms` in 26 Crockford base32 digits (TypeID). */
function fillId(ms: number): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  // 128 bits after two zero bits: 130 bits, 26 digits of 5.
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let digits = '';
  for (let i = 0; i < 26; i++) {
    digits = ALPHABET[Number(value & 31n)] + digits;
    value >>= 5n;
  }
  return `fil_${digits}`;
}

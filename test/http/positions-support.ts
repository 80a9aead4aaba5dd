import assert from 'node:assert/strict';
import { KYC3_REQUEST, sandboxPartner, type Json, type OrderContext } from '../support/order-context.js';

// What the position tests share: the partners, a marketable limit, and reads of positions, fills,
// prices and of everything a statement could change.

export const BAOBAB = sandboxPartner('baobab');
export const LAGUNE = sandboxPartner('lagune');
/** A KOLA.BRVM buy limit that the simulated price crosses at once. */
export const MARKETABLE = 1_565_500;
export const SUBJECT = KYC3_REQUEST.subject_id;

/** round_half_up(n / d) for n >= 0, as the documentation states it. */
export const half = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);

export async function positions(c: OrderContext, query = ''): Promise<Json[]> {
  const res = await c.api.call('GET', `/v1/positions${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { data: Json[] }).data;
}

export async function fillsOf(c: OrderContext, id: string): Promise<Json[]> {
  return ((await (await c.api.call('GET', `/v1/orders/${id}/fills`)).json()) as { data: Json[] }).data;
}

export async function referencePrice(c: OrderContext, code: string): Promise<number> {
  return ((await (await fetch(`${c.base}/v1/instruments/${code}`)).json()) as Json).reference_price_cents as number;
}

/** Everything a statement or an order could change, to show that a refusal changed none of it. */
export async function stored(c: OrderContext): Promise<string> {
  const { db } = c.runtime.storage;
  const tables = await Promise.all([
    db.selectFrom('positions').selectAll().orderBy('subject_id').orderBy('rcpt_to').orderBy('instrument').execute(),
    db.selectFrom('position_books').selectAll().orderBy('subject_id').orderBy('rcpt_to').execute(),
    db.selectFrom('position_statements').selectAll().orderBy('id').execute(),
    db.selectFrom('position_breaks').selectAll().orderBy('statement_id').orderBy('instrument').execute(),
    db.selectFrom('orders').select('id').orderBy('id').execute(),
    db.selectFrom('events').select('id').orderBy('id').execute(),
    db.selectFrom('idempotency_keys').select('key').orderBy('key').execute(),
  ]);
  return JSON.stringify(tables);
}

import type { Kysely } from 'kysely';
import { PreparedQuery } from '../storage/prepared.js';
import type { Database } from '../storage/schema.js';
import type { PartnerRow } from './partner.table.js';

export interface PartnerQuery {
  afterId: string | null;
  limit: number;
  jurisdiction?: string;
  capability?: string;
  approvedOnly: boolean;
}

/** Partners ordered by id, starting after `afterId`; one row more than `limit` tells if a page follows. */
export async function listPartners(db: Kysely<Database>, q: PartnerQuery): Promise<PartnerRow[]> {
  let query = db
    .selectFrom('partners')
    .selectAll()
    .orderBy('id')
    .limit(q.limit + 1);
  if (q.afterId !== null) query = query.where('id', '>', q.afterId);
  if (q.approvedOnly) query = query.where('status', '=', 'approved');
  if (q.jurisdiction !== undefined) query = query.where('jurisdiction', '=', q.jurisdiction);
  // Capabilities are a JSON array of fixed identifiers, so the quoted name matches exactly one item.
  if (q.capability !== undefined) query = query.where('capabilities', 'like', `%"${q.capability}"%`);
  return query.execute();
}

const partnerById = new PreparedQuery(1, (qb, id: string) => qb.selectFrom('partners').selectAll().where('id', '=', id));

export async function findPartner(db: Kysely<Database>, id: string): Promise<PartnerRow | undefined> {
  return partnerById.first(db, id);
}

export async function findPartnerByName(db: Kysely<Database>, name: string): Promise<PartnerRow | undefined> {
  return db.selectFrom('partners').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function upsertPartner(db: Kysely<Database>, row: PartnerRow): Promise<void> {
  const { id: _id, created_at: _created, ...changes } = row;
  await db
    .insertInto('partners')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet(changes))
    .execute();
}

export async function countPartners(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('partners')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Stores a partner's sealed FIX credentials (fix/credentials.ts); false when there is no such partner. */
export async function setPartnerFixCredentials(db: Kysely<Database>, id: string, sealed: string, now: number): Promise<boolean> {
  const result = await db.updateTable('partners').set({ fix_credentials: sealed, updated_at: now }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Stores a partner's sealed FIX TLS material (fix/credentials.ts), or removes it (null); false when there is no such partner. */
export async function setPartnerFixTls(db: Kysely<Database>, id: string, sealed: string | null, now: number): Promise<boolean> {
  const result = await db.updateTable('partners').set({ fix_tls: sealed, updated_at: now }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
